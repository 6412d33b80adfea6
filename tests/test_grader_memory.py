"""The grader's own memory stays small whatever a submission returns: every reply is bounded before it is read.

Each hostile submission is graded through the real CLI in a fresh process
that runs the grader in-process and then reports its own peak resident set
(``RUSAGE_SELF``: the grader itself, not its warm parent or learner processes).
Before the limits, 24 answers of 64 MiB took the grader to 2.9 GiB.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
PEAK_MIB = 200

# The peak is read from VmHWM, not getrusage: ru_maxrss survives exec, so a grader started from a large
# process (pytest, late in a full run) would report its parent's size instead of its own.
RUN_GRADER = """
import sys
sys.argv = ["grader"] + sys.argv[1:]
from grader.cli import main
try:
    main()
except SystemExit as exit_:
    code = exit_.code
sys.stdout.flush()
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(f"peak-rss-kib {peak} exit {code}", file=sys.stderr)
"""

NEAR_LIMIT = "np.ones(131072 - 64)"  # 1 MiB of numbers (the limit of one answer) less half a KiB
MAXIMAL = """
import numpy as np


def softmax(z, axis=-1):
    return np.ones(8 * 1024 * 1024)  # the largest array the protocol can describe (64 MiB), on every call
"""
AMPLIFIED_HEADERS = """
import os
import struct

HEADER = b'{"blobs":0,"pad":[' + b"{}," * 87000 + b'{}]}'  # just under a header's limit; each {} a dict in the grader
MESSAGE = struct.pack(">I", len(HEADER)) + HEADER


def softmax(z, axis=-1):
    for fd in range(3, 64):
        try:
            os.set_blocking(fd, True)
            for _ in range(64):
                os.write(fd, MESSAGE)
        except OSError:
            pass
    return z
"""
TINY_MESSAGES = """
import os

MESSAGES = b'\\x00\\x00\\x00\\x0b{"blobs":0}' * 70000  # 1 MiB of the smallest messages, each a dict in the grader


def softmax(z, axis=-1):
    for fd in range(3, 64):
        try:
            os.set_blocking(fd, True)
            for _ in range(32):
                os.write(fd, MESSAGES)
        except OSError:
            pass
    return z
"""

BATCH_OF_TINY_ANSWERS = """
import os
import struct

HEADER = (b'{"op":"results","first":0,"kinds":[{"ok":false,"error":{"type":"E","message":"%s","frames":[]}}],'
          b'"answers":[' + b"0," * 65535 + b'0],"sizes":[],"blobs":1}') % (b"m" * 500)
MESSAGE = struct.pack(">I", len(HEADER)) + HEADER + struct.pack(">I", 0)  # 65536 failed answers, in 128 KiB


def softmax(z, axis=-1):
    for fd in range(3, 64):
        try:
            os.set_blocking(fd, True)
            for _ in range(8):
                os.write(fd, MESSAGE)
        except OSError:
            pass
    return z
"""


def _every_entry_near_the_limit(catalog) -> str:  # type: ignore[no-untyped-def]
    from grader.spec.models import ImplementationExercise

    names = sorted(
        {
            name
            for exercise in catalog.exercises.values()
            if isinstance(exercise, ImplementationExercise)
            for name in exercise.entries
        }
    )
    functions = "".join(f"\ndef {name}(*args, **kwargs):\n    return {NEAR_LIMIT}\n" for name in names)
    return "import numpy as np\n\n" + functions


CASES = {
    "maximal-array-every-call": (
        lambda catalog: MAXIMAL,
        ["--exercise", "stable-softmax"],
        "returned more than 1 MiB in one answer (limit 1 MiB)",
    ),
    "many-answers-just-under-the-limit": (
        lambda catalog: (HOSTILE / "answers_at_the_limit.py").read_text(),
        ["--exercise", "stable-softmax"],
        "returned more than 4 MiB in the answers of one exercise (limit 4 MiB)",
    ),
    "huge-length-headers": (
        lambda catalog: (HOSTILE / "huge_length_headers.py").read_text(),
        ["--exercise", "stable-softmax"],
        "returned more than 1 MiB in one answer (limit 1 MiB)",
    ),
    "headers-that-grow-when-parsed": (
        lambda catalog: AMPLIFIED_HEADERS,
        ["--exercise", "stable-softmax"],
        "returned an unreadable or non-numeric value",
    ),
    "a-flood-of-tiny-messages": (
        lambda catalog: TINY_MESSAGES,
        ["--exercise", "stable-softmax"],
        "returned an unreadable or non-numeric value",
    ),
    "a-batch-of-many-tiny-answers": (
        lambda catalog: BATCH_OF_TINY_ANSWERS,
        ["--exercise", "stable-softmax"],
        "returned an unreadable or non-numeric value",
    ),
    "every-exercise-at-the-limit": (
        _every_entry_near_the_limit,
        ["--assignment", "all"],
        "returned more than 16 MiB in the answers of one submission (limit 16 MiB)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES), ids=sorted(CASES))
def test_the_grader_stays_small_whatever_a_submission_returns(catalog, tmp_path: Path, name: str) -> None:
    source, options, words = CASES[name]
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "attack.py").write_text(source(catalog))
    run = subprocess.run(
        [sys.executable, "-c", RUN_GRADER, "grade", str(folder), *options, "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "GRADER_CACHE_DIR": str(tmp_path / "cache")},
    )
    found = re.search(r"peak-rss-kib (\d+) exit (\S+)", run.stderr)
    assert found, run.stderr[-3000:]
    assert found.group(2) == "1", run.stderr[-3000:]  # graded, and failed: never the grader's own failure (3)
    peak_mib = int(found.group(1)) / 1024
    print(f"{name}: grader peak RSS {peak_mib:.0f} MiB")
    assert peak_mib < PEAK_MIB, (name, peak_mib)
    report = json.loads(run.stdout)
    said = json.dumps(report)
    assert words in said, said[:3000]
    assert report["score"] < report["max_score"]
