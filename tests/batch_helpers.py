"""A small generated class and a two-exercise spec folder for the batch tests.

The specs are copies of ``stable-softmax`` (with a short time limit, so the
endless loop costs a second) and ``why-softmax-quiz`` under an assignment of
their own, so the tests do not change when other exercises are added. None
of the learners prints anything: every result is byte-for-byte reproducible.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "batch-class"

CORRECT = """import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.exp(z - peak)
    return weights / np.sum(weights, axis=axis, keepdims=True)
"""

NO_MAX_SHIFT = """import numpy as np


def softmax(z, axis=-1):
    with np.errstate(all="ignore"):
        weights = np.exp(np.asarray(z, dtype=float))
        return weights / np.sum(weights, axis=axis, keepdims=True)
"""

IGNORES_AXIS = """import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    weights = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return weights / np.sum(weights, axis=-1, keepdims=True)
"""

ENDLESS = """def softmax(z, axis=-1):
    while True:
        pass
"""

EXITS = """import sys

sys.exit(3)
"""

RIGHT_ANSWERS = """why-softmax-quiz:
  divide-by-sum-fails: A
  argmax-fails: C
  square-fails: D
  exp-first: [A, B, C]
  argmax-gradient: A
"""

WRONG_ANSWERS = """why-softmax-quiz:
  divide-by-sum-fails: B
  argmax-fails: C
  square-fails: A
  exp-first: [A, B, C, D]
  argmax-gradient: A
"""


def make_exercises(base: Path) -> Path:
    """``base/exercises`` with the two exercises and the assignment; ``base/solutions`` for the known-wrong paths."""
    exercises = base / "exercises"
    exercises.mkdir(parents=True)
    spec = (ROOT / "exercises" / "stable-softmax.yaml").read_text(encoding="utf-8")
    if "\ntime_limit:" not in spec:
        spec += "time_limit: 0.5\n"
    (exercises / "stable-softmax.yaml").write_text(spec, encoding="utf-8")
    shutil.copy(ROOT / "exercises" / "why-softmax-quiz.yaml", exercises / "why-softmax-quiz.yaml")
    (exercises / f"{ASSIGNMENT}.yaml").write_text(
        f"id: {ASSIGNMENT}\nkind: assignment\ntitle: Batch test class\n"
        "exercises:\n  - why-softmax-quiz\n  - stable-softmax\n",
        encoding="utf-8",
    )
    shutil.copytree(ROOT / "solutions" / "stable-softmax", base / "solutions" / "stable-softmax")
    return exercises


def notebook(*cells: tuple[str, str]) -> str:
    """A minimal nbformat-4 notebook with the given ``(cell_type, source)`` cells."""
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": source.splitlines(keepends=True),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, source in cells
            ],
        }
    )


# learner name -> what it stands for; the folder/file made for it is in make_class
LEARNERS = ["Ann", "a b", "ann", "correct", "empty", "latin", "loop", "nb", "syntax", "x.y", "é"]


def make_class(folder: Path) -> Path:
    """Eleven learners: correct, buggy, hostile, notebooks, odd names, nothing to grade."""
    folder.mkdir(parents=True)
    correct = folder / "correct"
    correct.mkdir()
    (correct / "softmax.py").write_text(CORRECT)
    (correct / "answers.yaml").write_text(RIGHT_ANSWERS)
    ann_upper = folder / "Ann"  # differs from "ann" only in case
    ann_upper.mkdir()
    (ann_upper / "solution.py").write_text(NO_MAX_SHIFT)
    (ann_upper / "answers.yaml").write_text(WRONG_ANSWERS)
    (folder / "ann.py").write_text(IGNORES_AXIS)
    (folder / "a b.py").write_text(EXITS)
    (folder / "é.py").write_text(NO_MAX_SHIFT)
    (folder / "loop.py").write_text(ENDLESS)
    (folder / "x.y.yaml").write_text(RIGHT_ANSWERS)
    (folder / "empty").mkdir()
    (folder / "latin.py").write_bytes('NAME = "caf\u00e9"\ndef softmax(z, axis=-1):\n    return z\n'.encode("latin-1"))
    (folder / "syntax.py").write_text("def softmax(z axis=-1):\n    return z\n")
    (folder / "nb.ipynb").write_text(
        notebook(
            ("markdown", "# My softmax"),
            ("code", "%matplotlib inline\n!pip install numpy\n" + CORRECT),
            ("code", "softmax([1.0, 2.0])?\nprint_me = 1"),
        )
    )
    return folder


def snapshot(out: Path) -> dict[str, bytes]:
    """Every output file (relative path to bytes), without the lock file."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ".batch.lock"
    }


def crashing_worker_main(  # pragma: no cover - runs in a pool process
    config, connection, warm_parent=None, inherited=None, core=None
):
    """A pool process that dies while grading learner ``ann`` and hangs on ``loop``; grades the rest.

    ``warm_parent``, ``inherited`` and ``core`` are what a pool hands its processes (see ``executors.run_worker``).
    """
    import os
    import signal
    import time

    from grader.batch.affinity import keep_to
    from grader.batch.worker import start_worker

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if core is not None:
        keep_to(0, core)
    if inherited is not None:
        inherited.abandon()
    worker = start_worker(config, warm_parent)
    connection.send(("ready", None))
    while True:
        try:
            task = connection.recv()
        except EOFError:
            break
        if task is None:
            break
        if task.learner == "ann":
            os._exit(7)
        if task.learner == "loop":
            time.sleep(3600)
        connection.send(("done", worker.grade(task)))
    worker.close()


def affinity_worker_main(  # pragma: no cover - runs in a pool process
    config, connection, warm_parent=None, inherited=None, core=None
):
    """A pool process that answers each task with the cores it, its warm parent and a learner process may use."""
    import json
    import os

    from grader.batch.affinity import keep_to
    from grader.batch.worker import Outcome
    from grader.sandbox.runner import LearnerProcess
    from grader.sandbox.warm_parent import WarmParent

    if core is not None:
        keep_to(0, core)
    if inherited is not None:
        inherited.abandon()
    # Not forked from the batch (it ran threads): a warm parent of its own.
    warm_parent = warm_parent or WarmParent.start()
    connection.send(("ready", None))
    while connection.recv() is not None:  # each task asks for one probe; what it names does not matter here
        learner = LearnerProcess(warm_parent, {"probe.py": b"def probe():\n    return 1.0\n"}, "probe.py", ["probe"])
        try:
            learner.start()
            found = {
                "pid": os.getpid(),
                "core": core,
                "worker": sorted(os.sched_getaffinity(0)),
                "warm_parent": sorted(os.sched_getaffinity(warm_parent.pid)),
                "learner": sorted(os.sched_getaffinity(learner._pid)),
            }
        finally:
            learner.close()
        connection.send(("done", Outcome(result_json=json.dumps(found))))
    warm_parent.close()


def raising_worker_main(config, connection, **given):  # pragma: no cover - runs in a pool process
    """A pool process whose grading raises, as a grader bug would, for learner ``ann``; grades the rest.

    The exception is raised where grading a learner runs (``worker.grade_entry``), so the worker's own
    handling of a grader fault is what the batch sees. ``given``: what a pool hands its processes.
    """
    from pathlib import Path

    from grader.batch import executors, worker

    real = worker.grade_entry

    def grade_entry(session, selected, path, label, **options):
        if Path(path).stem == "ann":
            raise RuntimeError("an injected grader fault")
        return real(session, selected, path, label, **options)

    worker.grade_entry = grade_entry
    executors.run_worker(config, connection, **given)
