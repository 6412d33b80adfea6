"""Where a cold ``grader grade`` spends its time, phase by phase, beside the ``import numpy`` floor.

Run from the repository root:  python benchmarks/cold_grade.py [--runs 11] [--exercise stable-softmax]

Each run is a fresh process grading the exercise's reference solution (``--format json``), as
``benchmarks/run.py``'s cold figure does. Marks are taken inside it: when ``click`` and ``numpy``
are first imported; when the command line's modules are, then the grading modules (imported
here before the command runs, where the command would import them as it goes, so that their
functions can be timed); when the grading session has its catalog; when the learner process is
asked for and when it has imported the file; when it is closed (its calls answered and judged);
when the report is rendered; and when the command returns. Beside them: the whole process timed
from outside, ``python -c pass`` and ``python -c "import numpy"`` in the same interpreter, and
how long ``dataclasses`` took to build the classes the run defined as dataclasses (timed around the
standard library's private ``dataclasses._process_class``, so a later Python may need a change
here; the engine's records are ``msgspec`` Structs, built in C and not counted).
Runs go in turns (floor, grade, floor, grade, ...), so a machine whose speed drifts slows both
alike; every figure printed is a median. Nothing is asserted: run it before and after a change.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKS = ("click", "numpy")


def child(exercise: str, path: str) -> None:
    """Grade ``path`` as the ``grader`` command would, print the marks (ms since this function began), leave."""
    started = time.perf_counter()
    marks: dict[str, float] = {}
    classes = [0.0, 0]

    def mark(name: str) -> None:
        marks.setdefault(name, (time.perf_counter() - started) * 1000)

    def on_import(event: str, args: tuple) -> None:
        if event == "import" and args[0] in MARKS:
            mark(f"import {args[0]}")

    sys.addaudithook(on_import)
    import dataclasses

    build = dataclasses._process_class  # type: ignore[attr-defined]

    def timed_build(*args: object, **kwargs: object) -> object:
        begun = time.perf_counter()
        try:
            return build(*args, **kwargs)
        finally:
            classes[0] += (time.perf_counter() - begun) * 1000
            classes[1] += 1

    dataclasses._process_class = timed_build  # type: ignore[attr-defined]
    sys.argv = ["grader", "grade", path, "--exercise", exercise, "--format", "json"]
    sys.argv += ["--exercises", str(ROOT / "exercises")]
    import grader.cli.commands as commands  # starts the warm parent, as the program does

    mark("warm parent started, command line imported")
    # What the command imports once it runs, imported here first so that its functions can be timed.
    import grader.grading
    import grader.report
    import grader.report.json
    import grader.sandbox.runner

    mark("grading modules imported")

    def after(owner: object, name: str, label: str, *, before: str | None = None) -> None:
        function = getattr(owner, name)

        def wrapped(*args: object, **kwargs: object) -> object:
            if before:
                mark(before)
            try:
                return function(*args, **kwargs)
            finally:
                mark(label)

        setattr(owner, name, wrapped)

    after(grader.grading.GradingSession, "__init__", "catalog loaded")
    after(grader.sandbox.runner.LearnerProcess, "start", "learner imported the file", before="learner asked for")
    after(grader.sandbox.runner.LearnerProcess, "close", "learner closed")
    after(grader.report, "render", "report rendered")
    real = sys.stdout
    with open(os.devnull, "w") as sink:  # the report itself is not what is measured
        sys.stdout = sink
        try:
            commands.main(sys.argv[1:], standalone_mode=False)
        except SystemExit:
            pass
        mark("command returned")
        sys.stdout = real
    marks["dataclasses (ms, in all)"] = classes[0]
    marks["dataclasses (classes)"] = classes[1]
    print(json.dumps(marks), flush=True)
    os._exit(0)  # as the program does: no interpreter teardown


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    quiet = subprocess.DEVNULL
    subprocess.run(command, cwd=tempfile.gettempdir(), stdout=quiet, stderr=quiet, check=False)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--exercise", default="stable-softmax")
    parser.add_argument("--child", nargs=2, metavar=("EXERCISE", "PATH"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(*options.child)
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "grader")], capture_output=True)
    solution = ROOT / "solutions" / options.exercise / "reference.py"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / solution.name
        path.write_bytes(solution.read_bytes())
        grade = [sys.executable, "-m", "grader.cli", "grade", str(path), "--exercise", options.exercise]
        grade += ["--format", "json", "--exercises", str(ROOT / "exercises")]
        inside = [sys.executable, __file__, "--child", options.exercise, str(path)]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import numpy' (the floor)": [sys.executable, "-c", "import numpy"],
            "grader grade, whole process": grade,
        }
        for command in commands.values():
            _wall(command)  # the page cache and the disk caches warm: cold means a fresh process
        subprocess.run(inside, capture_output=True, check=False)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        marks: list[dict[str, float]] = []
        for _ in range(options.runs):
            for name, command in commands.items():
                walls[name].append(_wall(command))
            done = subprocess.run(inside, capture_output=True, text=True, check=False, cwd=folder)
            marks.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{options.runs} runs in turns, {os.cpu_count()} cores, Python {sys.version.split()[0]}; medians in ms")
    for name, times in walls.items():
        print(f"  {statistics.median(times):7.1f}  {name}")
    floor = statistics.median(walls["python -c 'import numpy' (the floor)"])
    print(f"  grader grade / floor: {statistics.median(walls['grader grade, whole process']) / floor:.2f}x")
    print("inside the grading process, from its first line:")
    names = [name for name in marks[0] if not name.startswith("dataclasses")]
    for name in sorted(names, key=lambda name: statistics.median(run.get(name, 0.0) for run in marks)):
        print(f"  {statistics.median(run[name] for run in marks if name in run):7.1f}  {name}")
    built = statistics.median(run["dataclasses (ms, in all)"] for run in marks)
    count = statistics.median(run["dataclasses (classes)"] for run in marks)
    print(f"  {built:7.1f}  building {count:.0f} dataclasses (spread over the imports above)")


if __name__ == "__main__":
    main()
