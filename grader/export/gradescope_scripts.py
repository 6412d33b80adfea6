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

__all__ = ["FINISH_RESULTS", "run_autograder", "setup_sh"]

_SETUP_SH = r"""#!/usr/bin/env bash
# Installs the grader; Gradescope runs this once, as root, when it builds the autograder.
# Written by 'grader export gradescope'. PYTHON picks the interpreter the venv is made from (default: python3).
# The grader goes into a virtual environment of its own ($ROOT/venv, or GRADER_VENV), apart from the
# image's Python and whatever the harness installs there: requirements.txt pins each dependency to the
# version the export found installed (on Python @PYTHON_VERSION@), and the grader's wheel is installed only
# if its bytes still have the sha256 the export wrote here.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PYTHON="${PYTHON:-python3}"
VENV="${GRADER_VENV:-$ROOT/venv}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

if ! "$PYTHON" -I -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3
        PYTHON=python3
    fi
fi
"$PYTHON" -I -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "setup.sh: the grader needs Python 3.10 or later; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
}
rm -rf "$VENV"
if ! "$PYTHON" -I -m venv "$VENV"; then  # Debian and Ubuntu keep venv (and its pip) in a package of its own
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv
        rm -rf "$VENV"
        "$PYTHON" -I -m venv "$VENV"
    else
        echo "setup.sh: $PYTHON cannot make a virtual environment (python3 -m venv)" >&2
        exit 1
    fi
fi
GRADER="$VENV/bin/python"
"$GRADER" -I -m pip install --no-cache-dir --no-input -r "$SOURCE/requirements.txt" || {
    echo "setup.sh: the pinned dependencies (requirements.txt, taken on Python @PYTHON_VERSION@) do not install" \
        "on $("$GRADER" --version 2>&1); export the bundle with a Python this image has, or pick a base" \
        "image with Python @PYTHON_VERSION@" >&2
    exit 1
}
printf '%s --hash=sha256:%s\n' "$SOURCE/wheels/@WHEEL@" "@SHA256@" > "$VENV/grader.txt"
"$GRADER" -I -m pip install --no-cache-dir --no-input --no-deps --require-hashes -r "$VENV/grader.txt"
"$GRADER" -I -m pip check
printf '%s\n' "$VENV/bin/python" > "$SOURCE/.grader-python"
# Proves the install, shows the sandbox tier this machine allows, and checks the specs load.
"$GRADER" -I -m grader.cli --version
"$GRADER" -I -m grader.cli --exercises "$SOURCE/exercises" list
"""


def setup_sh(wheel: str, sha256: str, python_version: str) -> str:
    """The ``setup.sh`` script installing the wheel ``wheel`` (file name, with its ``sha256``) into a venv.

    ``python_version`` is the Python the pins were taken on, named when they do not install.
    """
    return _SETUP_SH.replace("@WHEEL@", wheel).replace("@SHA256@", sha256).replace("@PYTHON_VERSION@", python_version)


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
# The submission's files from every folder of it (a zip holding a folder, a repository's src/), in one
# folder named submission, so that what the grader says names no folder of the machine.
STAGE="$(mktemp -d)"
NOTES="$STAGE/notes.txt"
if "$PYTHON" -I "$SOURCE/collect_submission.py" "$ROOT/submission" "$STAGE/submission" "$NOTES"; then
    cd "$STAGE"
else
    : > "$NOTES"
    cd "$ROOT"
fi
"$PYTHON" -I -m grader.cli --exercises "$SOURCE/exercises" grade submission \
    --assignment @ASSIGNMENT@ --format gradescope --output "$RESULTS/results.json"@EXTRA@ 2>"$LOG"
STATUS=$?
cat "$LOG" >&2  # for the instructor: Gradescope shows this output to students only if stdout_visibility says so
cd "$ROOT"
"$PYTHON" -I "$SOURCE/finish_results.py" "$RESULTS/results.json" "$STATUS" "$STARTED" "$LOG" "$NOTES" \
    || python3 -I "$SOURCE/finish_results.py" "$RESULTS/results.json" "$STATUS" "$STARTED" "$LOG" "$NOTES" \
    || printf '%s%s\n' '{"score": 0.0, "visibility": "visible", "stdout_visibility": "hidden", "tests": [], ' \
        '"output": "The autograder failed before it could grade this submission. This is not a judgement of your work: please contact your instructor."}' \
        > "$RESULTS/results.json"
rm -rf "$LOG" "$STAGE"
exit 0
"""  # noqa: E501 -- the script's text as written into the bundle


def run_autograder(assignment: str, *, allow_weak_sandbox: bool) -> str:
    """The ``run_autograder`` script for ``assignment``."""
    extra = " --allow-weak-sandbox" if allow_weak_sandbox else ""
    return _RUN_AUTOGRADER.replace("@ASSIGNMENT@", shlex.quote(assignment)).replace("@EXTRA@", extra)


FINISH_RESULTS = r'''"""Finish Gradescope's results.json after the grader ran (standard library only).

Usage: finish_results.py RESULTS_JSON GRADER_STATUS STARTED_EPOCH GRADER_LOG [NOTES]

When the grader graded (status 0 or 1) and wrote a result, add the one
top-level field it leaves to the platform: execution_time, the whole run in
whole seconds, measured here so the grader's own output stays byte-identical
for the same submission. Otherwise (a refusal, status 2; a failure, 3; a
crash; no file) write a valid result of score 0 that tells the learner to
contact the instructor; the grader's messages stay in the autograder's
output, which instructors see. NOTES, when given, holds lines about how
the submission's files were gathered (collect_submission.py); they go first
in the learner's output.
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


def notes(path):
    """The lines collect_submission.py wrote about the submission's files."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return [line.strip() for line in stream if line.strip()]
    except OSError:
        return []


def main(argv):
    path, status, started, log = argv[1], int(argv[2]), float(argv[3]), argv[4]
    results = read(path) if status in (0, 1) else None
    if results is None:
        results = fallback(status, log)
    said = notes(argv[5]) if len(argv) > 5 else []
    if said:
        results["output"] = "\n".join(said) + ("\n\n" + results["output"] if results.get("output") else "")
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
