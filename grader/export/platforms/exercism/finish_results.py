"""Finish Exercism's results.json after the grader ran (standard library only).

Usage: finish_results.py RESULTS_JSON GRADER_STATUS GRADER_LOG INPUT_DIR

The interface asks for paths as ``<solution-dir>/relative/path``, not the
runner's own folders: every string of the result has INPUT_DIR so written.
When the grader graded (status 0 or 1) and wrote a result, nothing else
changes. Otherwise (a refusal, status 2; a failure, 3; a crash; no file)
this writes a result of status ``error`` whose message says why, the only
thing a student reads then.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

SOLUTION_DIR = "<solution-dir>"
OUTPUT_LIMIT = 500  # characters: the interface's cap on a test's output, kept after paths are rewritten
TRUNCATED = "\n[Output was truncated. Please limit to 500 chars.]"


def read(path: str) -> dict[str, Any] | None:
    """The grader's result, if it wrote one Exercism can read."""
    try:
        with open(path, encoding="utf-8") as stream:
            results = json.load(stream)
    except (OSError, ValueError):
        return None
    return results if isinstance(results, dict) and results.get("status") in ("pass", "fail", "error") else None


def refusal(log: str) -> str:
    """The grader's one-line reason for refusing (exit 2), without its prefix."""
    try:
        with open(log, encoding="utf-8", errors="replace") as stream:
            lines = [line.strip() for line in stream if line.startswith("grader: error:")]
    except OSError:
        return ""
    return lines[0][len("grader: error:") :].strip() if lines else ""


def fallback(status: int, log: str) -> dict[str, Any]:
    """The error result for a run that gave none."""
    reason = refusal(log)
    if reason:
        message = "The tests could not run: " + reason
    else:
        message = f"The test runner failed before it could run the tests (status {status:d}); please report it."
    return {"version": 3, "status": "error", "message": message, "tests": []}


def relative(value: Any, folder: str) -> Any:
    """``value`` with the solution's folder written as <solution-dir>, in every string it holds."""
    if isinstance(value, str):  # the folder itself, not a longer name it begins ("/solution" in "/solutions")
        return re.sub(re.escape(folder) + r"(?![\w.-])", SOLUTION_DIR, value) if folder else value
    if isinstance(value, list):
        return [relative(item, folder) for item in value]
    if isinstance(value, dict):
        return {key: relative(item, folder) for key, item in value.items()}
    return value


def main(argv: list[str]) -> int:
    """Write the finished result over RESULTS_JSON."""
    path, status, log, folder = argv[1], int(argv[2]), argv[3], argv[4].rstrip("/")
    results = read(path) if status in (0, 1) else None
    if results is None:
        results = fallback(status, log)
    results = relative(results, os.path.abspath(folder) if folder else "")
    if folder and os.path.abspath(folder) != folder:  # given relative: that spelling too
        results = relative(results, folder)
    for test in results.get("tests") or []:
        output = test.get("output") if isinstance(test, dict) else None
        if isinstance(output, str) and len(output) > OUTPUT_LIMIT:
            test["output"] = output[: OUTPUT_LIMIT - len(TRUNCATED)] + TRUNCATED
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(results, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    os.replace(temporary, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
