#!/usr/bin/env bash
# PrairieLearn external-grader entrypoint: grades the student's files with the grader and writes
# /grade/results/results.json in PrairieLearn's format. Whatever happens, it leaves a valid result and exits 0.
#
# Set in the question's info.json, under externalGradingOptions.environment:
#   GRADER_EXERCISE             the exercise id(s) this question grades, separated by spaces; or
#   GRADER_ASSIGNMENT           an assignment id ('all' for everything)
#   GRADER_EXERCISES            the specs folder [default: /grade/serverFilesCourse/grader/exercises, the
#                               course's serverFilesCourse/grader/exercises; the image holds no specs]
#   GRADER_ALLOW_WEAK_SANDBOX=1 grade hidden checks even where the kernel lacks Landlock (see docs/platforms.md)
# GRADE_ROOT replaces /grade (for tests); PYTHON picks the interpreter (default python3).
set -u
ROOT="${GRADE_ROOT:-/grade}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RESULTS="$ROOT/results"
PYTHON="${PYTHON:-python3}"
mkdir -p "$RESULTS"
ROOT="$(cd "$ROOT" && pwd)"
RESULTS="$ROOT/results"
rm -f "$RESULTS/results.json"

EXERCISES="${GRADER_EXERCISES:-$ROOT/serverFilesCourse/grader/exercises}"
case "$EXERCISES" in /*) ;; *) EXERCISES="$PWD/$EXERCISES" ;; esac  # the grader runs from $ROOT, below
CHOSEN=()
for id in ${GRADER_EXERCISE:-}; do
    CHOSEN+=(--exercise "$id")
done
if [ -n "${GRADER_ASSIGNMENT:-}" ]; then
    CHOSEN+=(--assignment "$GRADER_ASSIGNMENT")
fi

LOG="$(mktemp)"
# Isolated mode: nothing in the working directory or PYTHONPATH can stand in for the grader or numpy.
# Graded from $ROOT as "student", so that what the grader says names no folder of the machine.
cd "$ROOT"
"$PYTHON" -I -m grader.cli --exercises "$EXERCISES" grade student ${CHOSEN[@]+"${CHOSEN[@]}"} \
    --format prairielearn --output "$RESULTS/results.json" 2>"$LOG"
STATUS=$?
cat "$LOG" >&2  # PrairieLearn keeps the container's output for the course staff
"$PYTHON" -I "$HERE/finish_results.py" "$RESULTS/results.json" "$STATUS" "$LOG" \
    || printf '%s\n' '{"gradable": false, "score": 0.0, "message": "The grader failed before it could grade this submission. Please contact your instructor.", "format_errors": ["The grader failed before it could grade this submission."], "tests": []}' \
        > "$RESULTS/results.json"
rm -f "$LOG"
exit 0
