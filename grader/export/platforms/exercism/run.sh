#!/usr/bin/env bash
# Exercism test-runner entry: run.sh SLUG INPUT_DIR OUTPUT_DIR (Exercism's interface).
# Grades the exercise SLUG (an exercise id of the grader) in INPUT_DIR and writes OUTPUT_DIR/results.json,
# version 3. Whatever happens, it leaves a valid results.json and exits 0, as the interface asks.
# GRADER_EXERCISES names the specs folder; PYTHON picks the interpreter (default python3).
set -u
if [ "$#" -ne 3 ]; then
    echo "usage: run.sh SLUG INPUT_DIR OUTPUT_DIR" >&2
    exit 2
fi
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
if [ "$STATUS" -gt 1 ] || [ ! -s "$OUTPUT/results.json" ]; then
    # No result from the grader: an error result saying why, for the student and the track's maintainers.
    "$PYTHON" -I - "$OUTPUT/results.json" "$STATUS" "$LOG" <<'PY' || printf '%s\n' '{"version": 3, "status": "error", "message": "The test runner failed before it could run the tests.", "tests": []}' > "$OUTPUT/results.json"
import json, sys
path, status, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(log, encoding="utf-8", errors="replace") as stream:
    reasons = [line[len("grader: error:"):].strip() for line in stream if line.startswith("grader: error:")]
if reasons:
    message = "The tests could not run: " + reasons[0]
else:
    message = "The test runner failed before it could run the tests (status %d); please report it." % status
with open(path, "w", encoding="utf-8") as stream:
    json.dump({"version": 3, "status": "error", "message": message, "tests": []}, stream, indent=2)
    stream.write("\n")
PY
fi
rm -f "$LOG"
exit 0
