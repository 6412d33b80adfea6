"""Speed and memory of the grader, measured side by side with a pytest-per-submission baseline.

Run from the repository root:  python benchmarks/run.py [--learners 200] [--repeat 7] [--batch-runs 3]

Prints, for this machine and this run:
  1. cold latency of `grader grade` on one exercise, as a ratio to `python -c "import numpy"`;
  2. the same for the whole `all` assignment;
  3. batch throughput: generated learners (half correct, half with one known bug) with
     `grader batch --jobs 2`, in submissions per second (and for correct learners alone): the
     median of ``--batch-runs`` runs taken in turns, with their range;
  4. the baseline instructors use today: one `pytest` process per submission, two at a time (a
     share of the class before each turn of batches, the shares adding up to the class once), and
     the ratio between the two (against the median batch), for two suites: the few dozen property
     tests of earlier rounds (``BASELINE_TEST``, nine of the exercises, a fraction of the grader's
     calls), and one that makes every learner call the grader makes, on the same arguments, and
     asks each quiz item (``benchmarks/equivalent_pytest.py``): the equivalent checks;
  5. peak memory (RSS) of a learner process and of the grader process.
Nothing here is asserted: the figures are printed for a person (or a later run) to compare.
The grader's modules are byte-compiled first (``python -m compileall``), as a regular install leaves
them; "cold" then means a fresh process each time, with the files already in the page cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from equivalent_pytest import write_suite

ROOT = Path(__file__).resolve().parents[1]
GRADER = [sys.executable, "-m", "grader.cli"]


def _time(command: list[str], cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _medians(commands: list[list[str]], repeat: int) -> list[float]:
    """The median time of each command, run in turns (a, b, c, a, b, c, ...).

    Taking turns puts the floor and the grader in the same moments of a machine
    whose speed drifts, so their ratio compares like with like.
    """
    for command in commands:
        _time(command)  # warm the page cache; cold means a fresh process, not a cold disk
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeat):
        for command, taken in zip(commands, times, strict=True):
            taken.append(_time(command))
    return [statistics.median(taken) for taken in times]


def _catalog() -> dict:
    sys.path.insert(0, str(ROOT))
    from grader.spec.loader import load_catalog
    from grader.spec.models import ImplementationExercise

    catalog = load_catalog(ROOT / "exercises")
    implementations = {e.id: e for e in catalog.exercises.values() if isinstance(e, ImplementationExercise)}
    return {"catalog": catalog, "implementations": implementations}


def make_class(directory: Path, learners: int) -> list[str]:
    """Half correct learners, half with one exercise replaced by a known-wrong solution (cycled).

    Every file ends with a comment naming its learner, so no two learners hand in the same bytes:
    the figures measure grading, not a cache of identical files.
    """
    info = _catalog()
    implementations = info["implementations"]
    answers = [p for p in (ROOT / "solutions").glob("*-answers.yaml")]
    wrongs = [(e.id, ROOT / w.path) for e in implementations.values() for w in e.known_wrong]
    names = []
    for number in range(learners):
        name = f"learner{number:03d}"
        folder = directory / name
        folder.mkdir(parents=True)
        for exercise in implementations.values():
            shutil.copy(ROOT / exercise.reference_solution, folder / f"{exercise.id.replace('-', '_')}.py")
        merged = "".join(path.read_text() for path in answers)
        (folder / "answers.yaml").write_text(merged)
        if number % 2:
            exercise_id, wrong = wrongs[(number // 2) % len(wrongs)]
            shutil.copy(wrong, folder / f"{exercise_id.replace('-', '_')}.py")
        for path in folder.glob("*.py"):
            with path.open("a") as handle:
                handle.write(f"\n# handed in by {name}\n")
        names.append(name)
    return names


BASELINE_TEST = """
import glob, importlib.util, os, sys
import numpy as np
import pytest

HERE = os.environ["LEARNER_DIR"]

def _load():
    namespace = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        namespace.update({k: v for k, v in vars(module).items() if callable(v)})
    return namespace

F = _load()

def ref_softmax(z, axis=-1):
    z = np.asarray(z, float); e = np.exp(z - z.max(axis=axis, keepdims=True)); return e / e.sum(axis=axis, keepdims=True)

RNG = np.random.default_rng(0)
CASES = [np.array([1.0, 2.0, 3.0]), np.array([1000.0, 1001.0]), np.array([1e300, -1e300])] + [RNG.normal(size=(3, 5)) * s for s in (1, 5, 1e3)]

@pytest.mark.parametrize("z", CASES)
def test_softmax_matches(z):
    np.testing.assert_allclose(F["softmax"](z.copy()), ref_softmax(z), rtol=1e-6, atol=1e-9)

@pytest.mark.parametrize("z", CASES)
def test_softmax_sums_to_one(z):
    assert np.allclose(F["softmax"](z.copy()).sum(axis=-1), 1)

@pytest.mark.parametrize("z", CASES)
def test_softmax_leaves_input(z):
    before = z.copy(); F["softmax"](z); assert np.array_equal(before, z)

@pytest.mark.parametrize("z", CASES[:3])
def test_log_softmax(z):
    if "log_softmax" in F:
        np.testing.assert_allclose(F["log_softmax"](z.copy()), np.log(ref_softmax(z)) if np.all(np.abs(z) < 700) else F["log_softmax"](z.copy()), rtol=1e-6, atol=1e-9)

@pytest.mark.parametrize("z", CASES[:3])
def test_jacobian(z):
    if "softmax_jacobian" in F:
        s = ref_softmax(z); np.testing.assert_allclose(F["softmax_jacobian"](z.copy()), np.diag(s) - np.outer(s, s), atol=1e-9)

@pytest.mark.parametrize("T", [0.5, 1.0, 4.0])
def test_temperature(T):
    if "softmax_with_temperature" in F:
        z = np.array([2.3, -0.5, 0.0, 4.1]); np.testing.assert_allclose(F["softmax_with_temperature"](z, T), ref_softmax(z / T), rtol=1e-6)

def test_temperature_rejects_zero():
    if "softmax_with_temperature" in F:
        with pytest.raises(ValueError):
            F["softmax_with_temperature"](np.array([1.0, 2.0]), 0.0)

def test_attention():
    if "attention_weights" in F:
        Q, K = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4))
        np.testing.assert_allclose(F["attention_weights"](Q, K), ref_softmax(Q @ K.T / 2.0), rtol=1e-6, atol=1e-9)

def test_cross_entropy():
    if "cross_entropy" in F:
        logits, targets = RNG.normal(size=(4, 6)), np.array([0, 5, 2, 1])
        expected = -np.mean(np.log(ref_softmax(logits))[np.arange(4), targets])
        assert abs(float(F["cross_entropy"](logits, targets)) - expected) < 1e-9

def test_scaling():
    if "dot_product_variance" in F:
        unscaled, scaled = F["dot_product_variance"](64, 4000, 0)
        assert abs(unscaled - 64) < 15 and abs(scaled - 1) < 0.25

def test_witnesses():
    if "divide_by_sum_counterexample" in F:
        z = np.asarray(F["divide_by_sum_counterexample"](), float); w = z / z.sum()
        assert (~np.isfinite(w)).any() or (w < 0).any() or (w > 1).any()
    if "order_counterexample" in F:
        z, i, j = F["order_counterexample"](); z = np.asarray(z, float); w = z**2 / (z**2).sum()
        assert z[i] > z[j] and w[i] <= w[j]
"""  # noqa: E501 -- a pytest file as a learner's course would write it, long lines and all


def baseline(directory: Path, names: list[str], jobs: int, test_file: Path, cases: Path | None = None) -> float:
    """Seconds for one pytest process per learner running ``test_file``, ``jobs`` at a time.

    ``cases``: the equivalent suite's precomputed calls (``BASELINE_CASES``), for that suite only.
    """

    def one(name: str) -> None:
        env = dict(os.environ, LEARNER_DIR=str(directory / "class" / name))
        if cases is not None:
            env["BASELINE_CASES"] = str(cases)
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
            cwd=directory,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )

    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, names))
    return time.perf_counter() - started


def grader_peak_rss(command: list[str]) -> float:
    """Peak RSS (MiB) of the largest process of one grader run: the grader itself (its warm parent and
    learner processes are smaller). Read from a wrapper's RUSAGE_CHILDREN, which covers the whole tree."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", probe, *GRADER, *command], cwd=ROOT, capture_output=True, text=True)
    return int(done.stdout.strip().splitlines()[-1]) / 1024


def learner_peak_rss() -> float:
    """Peak RSS (MiB) of a sandboxed learner process that ran the stable-softmax checks."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from grader.checks.base import Call
    from grader.sandbox.calls import encode_calls
    from grader.sandbox.runner import LearnerProcess
    from grader.sandbox.warm_parent import WarmParent

    source = (ROOT / "solutions/stable-softmax/reference.py").read_bytes() + (
        b"\nimport resource\ndef peak():\n    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    )
    rng = np.random.default_rng(0)
    calls = [Call("softmax", {"z": rng.normal(size=(50, 200)) * 1e3}) for _ in range(20)] + [Call("peak", {})]
    with (
        WarmParent.start() as warm_parent,
        LearnerProcess(warm_parent, {"m.py": source}, "m.py", ["softmax", "peak"]) as process,
    ):
        process.start()
        encoded = encode_calls(calls)
        outcomes = process.call_many(encoded)
    return float(outcomes[-1].values[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--batch-runs", type=int, default=3, help="time each batch this many times (in turns) and report the median [3]"
    )
    options = parser.parse_args()

    # Bytecode for the grader's own modules, as a regular install leaves it: where PYTHONDONTWRITEBYTECODE is
    # set and the install is editable, Python would otherwise compile them again in every cold run.
    compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "grader")], capture_output=True)
    work = Path(tempfile.mkdtemp(prefix="grader-bench-"))
    try:
        names = make_class(work / "class", options.learners)
        correct = work / "class" / names[0]
        single = correct / "stable_softmax.py"
        floor, one, whole = _medians(
            [
                [sys.executable, "-c", "import numpy"],
                GRADER + ["grade", str(single), "--exercise", "stable-softmax"],
                GRADER + ["grade", str(correct), "--assignment", "all"],
            ],
            options.repeat,
        )
        print(
            f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; grader bytecode "
            f"{'compiled first' if compiled.returncode == 0 else 'could not be compiled'}"
        )
        print(f"1. floor `python -c 'import numpy'`: {floor:.3f} s")
        print(f"   cold `grader grade` one exercise: {one:.3f} s  = {one / floor:.2f}x the floor (target <= 2x)")
        print(f"2. cold `grader grade --assignment all`: {whole:.3f} s  = {whole / floor:.2f}x the floor")

        correct_dir = work / "correct"
        correct_dir.mkdir()
        for name in names[::2]:
            shutil.copytree(work / "class" / name, correct_dir / name)
        everyone: list[float] = []
        only_correct: list[float] = []
        failed = None
        subset_file = work / "test_baseline.py"
        subset_file.write_text(BASELINE_TEST)
        suite, cases, tests = write_suite(work)
        subset = base = 0.0
        turns = max(1, options.batch_runs)
        for turn in range(turns):  # in turns, like the cold commands: a drifting machine slows both
            # A share of the class through each pytest suite between batches, so that the ratio compares
            # moments of the same speed: the shares add up to the whole class once.
            share = names[turn::turns]
            subset += baseline(work, share, options.jobs, subset_file)
            base += baseline(work, share, options.jobs, suite, cases)
            for folder, times in ((work / "class", everyone), (correct_dir, only_correct)):
                started = time.perf_counter()
                command = GRADER + [
                    "batch",
                    str(folder),
                    "--assignment",
                    "all",
                    "--out",
                    str(work / f"out-{folder.name}"),
                    "--jobs",
                    str(options.jobs),
                    "--force",
                ]
                done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
                times.append(time.perf_counter() - started)
                failed = failed or (done if done.returncode != 0 else None)
        batch_seconds = statistics.median(everyone)
        if failed is not None:
            print(f"3. batch failed (exit {failed.returncode}): {failed.stderr.strip()[-500:]}")
            batch_rate = float("nan")
        else:
            batch_rate = len(names) / batch_seconds
            runs = f"median of {len(everyone)}, {len(names) / max(everyone):.1f}-{len(names) / min(everyone):.1f}/s"
            print(
                f"3. `grader batch --jobs {options.jobs}` on {len(names)} learners (half buggy): "
                f"{batch_seconds:.2f} s = {batch_rate:.1f} submissions/s ({runs}) (target >= 20)"
            )
            seconds, count = statistics.median(only_correct), len(names[::2])
            runs = f"median of {len(only_correct)}, {count / max(only_correct):.1f}-{count / min(only_correct):.1f}/s"
            print(f"   correct learners only ({count}): {seconds:.2f} s = {count / seconds:.1f} submissions/s ({runs})")
        print(
            f"4. pytest per submission, {options.jobs} at a time, the earlier rounds' few property tests: "
            f"{subset:.2f} s = {len(names) / subset:.1f} submissions/s; grader batch is "
            f"{subset / batch_seconds:.1f}x faster"
        )
        print(
            f"   the equivalent checks ({tests} tests: every learner call the grader makes, and each quiz item): "
            f"{base:.2f} s = {len(names) / base:.1f} submissions/s; grader batch is {base / batch_seconds:.1f}x "
            f"faster (target >= 20x)"
        )
        print(
            f"5. peak RSS: learner process {learner_peak_rss():.0f} MiB (target < 150); grader process "
            f"{grader_peak_rss(['grade', str(correct), '--assignment', 'all']):.0f} MiB"
        )
        summary = {
            "floor": floor,
            "single": one,
            "all": whole,
            "batch_rate": batch_rate,
            "subset_baseline_seconds": subset,
            "baseline_seconds": base,
        }
        print("json:", json.dumps({k: round(v, 4) for k, v in summary.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
