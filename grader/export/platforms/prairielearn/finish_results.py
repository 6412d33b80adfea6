"""Make sure PrairieLearn gets a valid results.json after the grader ran (standard library only).

Usage: finish_results.py RESULTS_JSON GRADER_STATUS GRADER_LOG

When the grader graded (status 0 or 1) and wrote a result, it is left as it
is. Otherwise (a refusal, status 2; a failure, 3; a crash; no file) this
writes a result that PrairieLearn shows as "invalid, not gradable": no
points, and the attempt is not counted, since the fault is not the
student's. It asks the student to contact the instructor; the grader's own
messages stay in the container's output, which course staff see.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

CONTACT = "Please contact your instructor, who can see the details in the grading job's output."


def valid(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as stream:
            results = json.load(stream)
    except (OSError, ValueError):
        return False
    return isinstance(results, dict) and ("score" in results or results.get("gradable") is False)


def refusal(log: str) -> str:
    """The grader's one-line reason for refusing (exit 2), without its prefix."""
    try:
        with open(log, encoding="utf-8", errors="replace") as stream:
            lines = [line.strip() for line in stream if line.startswith("grader: error:")]
    except OSError:
        return ""
    return lines[0][len("grader: error:") :].strip().rstrip(".") if lines else ""


def fallback(status: int, log: str) -> dict[str, Any]:
    reason = refusal(log) if status == 2 else ""
    if "--allow-weak-sandbox" in reason:  # the machine's fault, and the fix is the instructor's
        why = "The grading machine cannot confine submitted code well enough to run the hidden checks."
    elif reason:
        why = "The grader could not grade this submission: " + reason + "."
    else:
        why = f"The grader failed before it could grade this submission (status {status:d})."
    return {"gradable": False, "score": 0.0, "message": why + " " + CONTACT, "format_errors": [why], "tests": []}


def main(argv: list[str]) -> int:
    path, status, log = argv[1], int(argv[2]), argv[3]
    if status in (0, 1) and valid(path):
        return 0
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(fallback(status, log), stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    os.replace(temporary, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
