"""Broken learner code is graded, never fatal: score 0, a reason that says what happened, on time."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SUBMISSIONS = {
    "exit-at-import": (
        "import sys\nsys.exit(0)\ndef softmax(z, axis=-1):\n    return z\n",
        "stopped Python while it was being imported (SystemExit 0)",
    ),
    "loop-at-import": ("while True:\n    pass\ndef softmax(z, axis=-1):\n    return z\n", "no answer within"),
    "loop-in-softmax": ("def softmax(z, axis=-1):\n    while True:\n        pass\n", "no answer within 2 s"),
    "unbounded-allocation": (
        "def softmax(z, axis=-1):\n    hoard = []\n    while True:\n        hoard.append(bytearray(10**7))\n",
        "MemoryError",
    ),
    "raises": (
        "def softmax(z, axis=-1):\n    raise RuntimeError('not written yet')\n",
        "RuntimeError: not written yet (mine.py line 2: raise RuntimeError('not written yet'))",
    ),
    "exits-in-call": ("import os\ndef softmax(z, axis=-1):\n    os._exit(0)\n", "exited with status 0"),
    "syntax-error": ("def softmax(z, axis=-1)\n    return z\n", "SyntaxError at line 1"),
    "returns-object": (
        "class Liar:\n    def __eq__(self, other):\n        return True\ndef softmax(z, axis=-1):\n    return Liar()\n",
        "not an array of numbers",
    ),
    "floods-output": (
        "def softmax(z, axis=-1):\n    while True:\n        print('x' * 65536)\n",
        "printed more than 1 MiB",
    ),
}
AT_IMPORT = {"exit-at-import", "loop-at-import", "syntax-error"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_grade_broken_submission_scores_zero_with_reason(tmp_path: Path, name: str) -> None:
    source, expected = SUBMISSIONS[name]
    path = tmp_path / "mine.py"
    path.write_text(source)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", str(path), "--exercise", "stable-softmax", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["score"] == 0
    exercise = report["exercises"][0]
    reasons = " ".join([exercise["reason"], *(check["reason"] for check in exercise["checks"])])
    assert expected in reasons
    if name in AT_IMPORT:  # said once, in the exercise's reason; each check only points to it
        assert expected in exercise["reason"] and reasons.count(expected) == 1
    assert elapsed < 30


@pytest.mark.slow
def test_grade_warnings_on_stderr_cost_nothing(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text(
        (ROOT / "solutions/stable-softmax/reference.py").read_text()
        + "\nimport sys, warnings\nwarnings.warn('deprecated thing')\nprint('debug', file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", str(path), "--exercise", "stable-softmax"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert "learner| debug" in done.stdout


def test_an_exception_names_the_learners_own_frames_as_the_standard_traceback_would(tmp_path: Path) -> None:
    """Frames outside the learner's files (numpy's, ours) are left out; each kept one has its line of code."""
    import importlib.util
    import traceback

    import numpy as np

    from grader.sandbox import learner_errors

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "helper.py").write_text("import numpy as np\n\ndef solve(a):\n    return np.linalg.solve(a, a)\n")
    (scratch / "mine.py").write_text(
        "from helper import solve\n\ndef softmax(z, axis=-1):\n    inner = solve(z)  # singular\n    return inner\n"
    )
    sys.path.insert(0, str(scratch))
    try:
        spec = importlib.util.spec_from_file_location("mine_frames", scratch / "mine.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        with pytest.raises(np.linalg.LinAlgError) as caught:
            module.softmax(np.zeros((2, 2)))
    finally:
        sys.path.remove(str(scratch))
        sys.modules.pop("helper", None)
    described = learner_errors.describe_exception(caught.value, str(scratch))
    expected = [
        {"file": Path(f.filename).name, "line": f.lineno, "function": f.name, "text": f.line}
        for f in traceback.extract_tb(caught.value.__traceback__)
        if f.filename.startswith(str(scratch))
    ]
    assert described["frames"] == expected
    assert [(f["file"], f["function"], f["text"]) for f in described["frames"]] == [
        ("mine.py", "softmax", "inner = solve(z)  # singular"),
        ("helper.py", "solve", "return np.linalg.solve(a, a)"),
    ]
