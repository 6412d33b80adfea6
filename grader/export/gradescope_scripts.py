"""The scripts at the root of a Gradescope autograder bundle, as text.

``setup.sh`` runs once, as root, when Gradescope builds the autograder's
image; ``run_autograder`` once per submission. Both find their files under
``$AUTOGRADER_ROOT`` (default ``/autograder``): the bundle unzipped in
``source/``, the learner's files in ``submission/``, the result in
``results/results.json``. ``finish_results.py`` uses the standard library
alone, so it still writes a valid result when the grader cannot even start.
Every Python they start runs isolated (``-I``): no folder beside the
submission or on ``PYTHONPATH`` can stand in for pip, the grader or numpy.
"""

from __future__ import annotations

import shlex

__all__ = ["FINISH_RESULTS", "SETUP_SH", "run_autograder"]

SETUP_SH = r"""#!/usr/bin/env bash
# Installs the grader; Gradescope runs this once, as root, when it builds the autograder.
# Written by 'grader export gradescope'. PYTHON picks the interpreter (default: python3 on PATH).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -I -m pip --version >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip
        PYTHON=python3
    else
        echo "setup.sh: no Python with pip found (set PYTHON to one)" >&2
        exit 1
    fi
fi
"$PYTHON" -I -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "setup.sh: the grader needs Python 3.10 or later; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
}
# A throwaway image: installing beside the system's packages is what it is for.
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
"$PYTHON" -I -m pip install --no-cache-dir "$SOURCE"/wheels/*.whl
"$PYTHON" -I -c 'import sys; print(sys.executable)' > "$SOURCE/.grader-python"
# Proves the install, shows the sandbox tier this machine allows, and checks the specs load.
"$PYTHON" -I -m grader.cli --version
"$PYTHON" -I -m grader.cli --exercises "$SOURCE/exercises" list
"""

_RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Grades one submission; Gradescope runs this for every submission. Written by 'grader export gradescope'.
# Whatever happens, it leaves a valid results/results.json and exits 0.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
RESULTS="$ROOT/results"
PYTHON="$(cat "$SOURCE/.grader-python" 2>/dev/null || echo python3)"
mkdir -p "$RESULTS"
rm -f "$RESULTS/results.json"
LOG="$(mktemp)"
STARTED="$(date +%s)"
cd "$SOURCE"
"$PYTHON" -I -m grader.cli --exercises "$SOURCE/exercises" grade "$ROOT/submission" \
    --assignment @ASSIGNMENT@ --format gradescope --output "$RESULTS/results.json"@EXTRA@ 2>"$LOG"
STATUS=$?
cat "$LOG" >&2  # for the instructor: Gradescope shows this output to students only if stdout_visibility says so
"$PYTHON" -I "$SOURCE/finish_results.py" "$RESULTS/results.json" "$STATUS" "$STARTED" "$LOG" \
    || python3 -I "$SOURCE/finish_results.py" "$RESULTS/results.json" "$STATUS" "$STARTED" "$LOG" \
    || printf '%s%s\n' '{"score": 0.0, "visibility": "visible", "stdout_visibility": "hidden", "tests": [], ' \
        '"output": "The autograder failed before it could grade this submission. This is not a judgement of your work: please contact your instructor."}' \
        > "$RESULTS/results.json"
rm -f "$LOG"
exit 0
"""  # noqa: E501 -- the script's text as written into the bundle


def run_autograder(assignment: str, *, allow_weak_sandbox: bool) -> str:
    """The ``run_autograder`` script for ``assignment``."""
    extra = " --allow-weak-sandbox" if allow_weak_sandbox else ""
    return _RUN_AUTOGRADER.replace("@ASSIGNMENT@", shlex.quote(assignment)).replace("@EXTRA@", extra)


FINISH_RESULTS = r'''"""Finish Gradescope's results.json after the grader ran (standard library only).

Usage: finish_results.py RESULTS_JSON GRADER_STATUS STARTED_EPOCH GRADER_LOG

When the grader graded (status 0 or 1) and wrote a result, add the one
top-level field it leaves to the platform: execution_time, the whole run in
whole seconds, measured here so the grader's own output stays byte-identical
for the same submission. Otherwise (a refusal, status 2; a failure, 3; a
crash; no file) write a valid result of score 0 that tells the learner to
contact the instructor; the grader's messages stay in the autograder's
output, which instructors see.
"""

import json
import os
import sys
import time

CONTACT = ("This is not a judgement of your work: please contact your instructor, who can see the details "
           "in the autograder's output.")


def read(path):
    try:
        with open(path, encoding="utf-8") as stream:
            results = json.load(stream)
    except (OSError, ValueError):
        return None
    if isinstance(results, dict) and isinstance(results.get("tests"), list) and "score" in results:
        return results
    return None


def refusal(log):
    """The grader's one-line reason for refusing (exit 2), without its prefix."""
    try:
        with open(log, encoding="utf-8", errors="replace") as stream:
            lines = [line.strip() for line in stream if line.startswith("grader: error:")]
    except OSError:
        return ""
    return lines[0][len("grader: error:"):].strip() if lines else ""


def fallback(status, log):
    if status == 2:
        reason = refusal(log).rstrip(".")
        if "--allow-weak-sandbox" in reason:  # the machine's fault, and the fix is the instructor's
            output = ("The autograder's machine cannot confine submitted code well enough to run the hidden "
                      "checks, so it graded nothing. " + CONTACT)
        else:
            output = "The grader could not grade this submission" + (": " + reason + "." if reason else ".")
            output += " If that does not say how to fix it, please contact your instructor."
    elif status in (0, 1):
        output = "The grader finished but wrote no result. " + CONTACT
    else:
        output = "The autograder failed before it could grade this submission (status %d). %s" % (status, CONTACT)
    return {"score": 0.0, "output": output, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": [], "extra_data": {"grader_exit_status": status}}


def main(argv):
    path, status, started, log = argv[1], int(argv[2]), float(argv[3]), argv[4]
    results = read(path) if status in (0, 1) else None
    if results is None:
        results = fallback(status, log)
    results["execution_time"] = max(0, int(round(time.time() - started)))
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(results, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    os.replace(temporary, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''
