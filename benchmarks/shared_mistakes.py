"""Time of the shared-mistake grouping (``grader.batch.mistakes``) over a large synthetic class.

Run from the repository root:  python benchmarks/shared_mistakes.py [--learners 5000] [--checks 20]

Each learner fails every check on one input: a third of them with one of five shared wrong outputs, the
rest with outputs of their own; then a class whose outputs all agree to three figures and differ beyond
the tolerance (the worst case of the buckets). Nothing is asserted: the figures (wall clock and CPU
time) are printed for a person to compare.
"""

from __future__ import annotations

import argparse
import random
import time

from grader.batch.mistakes import shared_mistakes
from grader.results import CheckResult, ExerciseResult, FailingOutput, Report


def _class(learners: int, checks: int, output) -> dict[str, Report]:
    reports = {}
    for index in range(learners):
        results = []
        for number in range(checks):
            values = output(index, number)
            failing = FailingOutput(
                input="f(x=array([1., 2.]))",
                got=str(values),
                expected="e",
                values=values,
                shapes=[[len(values)]],
                rtol=1e-6,
                atol=1e-9,
            )
            results.append(
                CheckResult(
                    id=f"check-{number}",
                    status="failed",
                    score=0.0,
                    max_score=1.0,
                    visibility="hidden",
                    reason="did not hold.",
                    failing=failing,
                )
            )
        exercise = ExerciseResult(
            id="ex",
            kind="implementation",
            status="failed",
            score=0.0,
            max_score=float(checks),
            reason="r",
            checks=results,
        )
        name = f"learner{index:05d}"
        reports[name] = Report(
            grader_version="b", submission=name, score=0.0, max_score=float(checks), exercises=[exercise]
        )
    return reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=5000)
    parser.add_argument("--checks", type=int, default=20)
    args = parser.parse_args()
    draw = random.Random(0)
    shared = [[draw.random() for _ in range(8)] for _ in range(5)]

    def typical(index: int, number: int) -> list[float | str]:
        return list(shared[index % 5]) if index % 3 == 0 else [draw.random() for _ in range(8)]

    def alike(index: int, number: int) -> list[float | str]:
        return [1.0 + 3e-6 * index] * 8

    for label, output in (("typical", typical), ("just beyond the tolerance", alike)):
        reports = _class(args.learners, args.checks, output)
        started, cpu = time.perf_counter(), time.process_time()
        groups = shared_mistakes(reports)
        took, used = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"{label}: {args.learners} learners x {args.checks} failed checks: {len(groups)} groups in "
            f"{took:.2f} s ({used:.2f} s of CPU; a machine shared with others shows the difference)"
        )


if __name__ == "__main__":
    main()
