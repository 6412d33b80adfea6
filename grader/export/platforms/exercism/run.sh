#!/usr/bin/env bash
# Exercism test-runner entry: bin/run.sh SLUG INPUT_DIR OUTPUT_DIR (Exercism's test-runner interface).
# Written by 'grader export exercism DIR'. Grades the exercise SLUG (an exercise id of the grader) in INPUT_DIR
# and writes OUTPUT_DIR/results.json, version 3. Whatever happens, it leaves a valid results.json and exits 0.
# GRADER_EXERCISES names the specs folder (the image sets it); PYTHON picks the interpreter (default python3).
set -u
if [ "$#" -ne 3 ]; then
    echo "usage: run.sh SLUG INPUT_DIR OUTPUT_DIR" >&2
    exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SLUG="$1"
INPUT="${2%/}"
OUTPUT="${3%/}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUTPUT"
rm -f "$OUTPUT/results.json"
LOG="$(mktemp)"
# Isolated mode: nothing in the working directory (which may be the solution's) can stand in for the grader.
"$PYTHON" -I -m grader.cli grade "$INPUT" --exercise "$SLUG" --format exercism --output "$OUTPUT/results.json" 2>"$LOG"
STATUS=$?
cat "$LOG" >&2
# The result as the interface asks: paths as <solution-dir>/..., and an error result when the grader wrote none.
"$PYTHON" -I "$HERE/finish_results.py" "$OUTPUT/results.json" "$STATUS" "$LOG" "$INPUT" \
    || printf '%s\n' '{"version": 3, "status": "error", "message": "The test runner failed before it could run the tests.", "tests": []}' \
        > "$OUTPUT/results.json"
rm -f "$LOG"
exit 0
