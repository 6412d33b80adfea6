"""Where a learner's grading time goes: calls per exercise and per check, and CPU per process kind.

Run from the repository root:  python benchmarks/where_time_goes.py [--learners 40] [--repeat 10]

Prints, for the catalog as it stands:
  1. each implementation exercise's learner calls: the unique calls sent to a learner process, the
     calls its checks name before duplicates are merged, and per check how many it names and how
     many only it names (what it costs beyond the calls other checks share with it);
  2. grading a generated class (``benchmarks/run.py``'s: the catalog's solutions, every other learner
     with one known-wrong file) in one ``GradingSession``, the CPU per learner of the grading process,
     of the learner processes and of the warm parent (read from ``/proc``: the warm parent reaps the
     learner processes, so their CPU is its children's), for correct and for single-bug learners.
Nothing is asserted; run it before and after a change, in turns, and compare.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

_TICKS = os.sysconf("SC_CLK_TCK")


def count_calls() -> None:
    """Print each exercise's unique learner calls, and each check's share of them."""
    from grader.engine.plan import build_plan, checks_to_run
    from grader.spec.loader import load_catalog
    from grader.spec.models import ImplementationExercise

    catalog = load_catalog(ROOT / "exercises")
    unique_total = named_total = 0
    for exercise in catalog.assignment("all"):
        if not isinstance(exercise, ImplementationExercise):
            continue
        plan = build_plan(exercise, checks_to_run(exercise, False))
        learner = {key for key, call in enumerate(plan.table.calls) if call.on == "learner"}
        owners: dict[int, set[str]] = {}
        named: Counter[str] = Counter()
        for planned in plan.checks:
            for keys in planned.keys:
                for key in keys:
                    if key in learner:
                        named[planned.check.id] += 1
                        owners.setdefault(key, set()).add(planned.check.id)
        unique, total = len(plan.whole_keys), sum(named.values())
        unique_total, named_total = unique_total + unique, named_total + total
        print(f"{exercise.id}: {unique} unique learner calls ({total} named by its checks)")
        for check_id, count in named.items():
            own = sum(1 for holders in owners.values() if holders == {check_id})
            print(f"    {check_id}: {count} (only its own: {own})")
    print(f"all: {unique_total} unique learner calls a learner ({named_total} named by the checks)")


def _cpu(pid: int) -> tuple[float, float]:
    """A process's own CPU seconds and those of the children it has reaped, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS, (int(fields[13]) + int(fields[14])) / _TICKS


def split_cpu(learners: int) -> None:
    """Grade a generated class in one session; print CPU per learner by process kind."""
    from run import make_class

    from grader.grading import GradingSession
    from grader.report import render

    work = Path(tempfile.mkdtemp(prefix="grader-where-"))
    try:
        names = make_class(work / "class", max(learners, 4))
        folders = [work / "class" / name for name in names]
        with GradingSession(exercises_dir=ROOT / "exercises") as session:
            pid = session.warm_parent.pid
            assert pid is not None
            for folder in folders[:2]:  # plans, reference answers and preloaded requests are made once a session
                render(session.grade(folder, assignment="all"), "json")
            for label, group in (("correct", folders[2::2]), ("single-bug", folders[3::2])):
                warm_before, learner_before = _cpu(pid)
                own_before, wall_before = os.times(), time.perf_counter()
                for folder in group:
                    render(session.grade(folder, assignment="all"), "json")
                own_after, wall_after = os.times(), time.perf_counter()
                warm_after, learner_after = _cpu(pid)
                own = own_after.user + own_after.system - own_before.user - own_before.system
                per = 1000 / len(group)
                learner_cpu, warm_cpu = (learner_after - learner_before) * per, (warm_after - warm_before) * per
                print(
                    f"{label} ({len(group)}): wall {(wall_after - wall_before) * per:.1f} ms a learner; CPU: "
                    f"grading process {own * per:.1f} ms, learner processes {learner_cpu:.1f} ms, "
                    f"warm parent {warm_cpu:.1f} ms"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def per_exercise(repeat: int) -> None:
    """Grade one correct learner exercise by exercise; print the CPU each exercise costs, by process kind.

    Each grade of one exercise starts its own learner process, so each figure holds one process
    start and one import of the learner's file besides the exercise's calls.
    """
    from run import make_class

    from grader.grading import GradingSession
    from grader.spec.models import ImplementationExercise

    work = Path(tempfile.mkdtemp(prefix="grader-where-"))
    try:
        folder = work / "class" / make_class(work / "class", 2)[0]  # the first learner is a correct one
        with GradingSession(exercises_dir=ROOT / "exercises") as session:
            pid = session.warm_parent.pid
            assert pid is not None
            session.grade(folder, assignment="all")  # plans and reference answers are made once a session
            for exercise in session.catalog.assignment("all"):
                if not isinstance(exercise, ImplementationExercise):
                    continue
                _, learner_before = _cpu(pid)
                own_before = os.times()
                for _ in range(repeat):
                    session.grade(folder, exercise_ids=[exercise.id])
                time.sleep(0.2)  # the warm parent reaps the last process when it is next idle
                _, learner_after = _cpu(pid)
                own_after = os.times()
                own = own_after.user + own_after.system - own_before.user - own_before.system
                print(
                    f"{exercise.id:24s} learner processes {(learner_after - learner_before) * 1000 / repeat:6.1f} ms, "
                    f"grading process {own * 1000 / repeat:6.1f} ms"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=10, help="grades of each exercise in part 3 [10]")
    options = parser.parse_args()
    count_calls()
    split_cpu(options.learners)
    per_exercise(options.repeat)


if __name__ == "__main__":
    main()
