"""Time of the similarity page's search over a large synthetic class, and beside it copydetect's.

Run from the repository root:  python benchmarks/similarity.py [--learners 5000] [--copydetect PYTHON]

Generates learners' files (functions built from random statements, names and constants, drawn with
a fixed seed; one learner in a hundred hands in a renamed, reordered copy of another's), then times
``find_similar`` over them and counts the planted copies it lists first. ``--copydetect PYTHON``
also times copydetect 0.5 (run by that interpreter, which must have it installed) on the same
files. Nothing is asserted: the figures are printed for a person to compare.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from grader.batch.similarity import find_similar

_FUNCS = ["exp", "log", "sqrt", "abs", "tanh", "cumsum", "sort", "square", "log1p", "expm1", "sign", "floor"]
_REDUCE = ["sum", "max", "min", "mean", "std", "prod", "argmax", "var"]
_OPS = ["+", "-", "*", "/"]
_WORDS = ["z", "x", "v", "w", "s", "p", "q", "out", "tmp", "acc", "row", "col", "val", "res", "top", "tot"]


def _statement(rng: random.Random, names: list[str]) -> str:
    a, b, c = (rng.choice(names) for _ in range(3))
    op, f, g = rng.choice(_OPS), rng.choice(_FUNCS), rng.choice(_REDUCE)
    number = rng.choice(["1", "2", "0.5", "1e-9", "10", "3"])
    forms = [
        f"{a} = np.{f}({b} {op} {c})",
        f"{a} = {b} {op} np.{g}({c}, axis=-1, keepdims=True)",
        f"{a} = np.where(np.isfinite({b}), {b}, {number})",
        f"for i in range(len({a})):\n    {a}[i] {op}= {b}[i]",
        f"if np.{g}({a}) > {number}:\n    {a} = {a} / np.{g}({a})",
        f"{a} = np.{f}({b}).{g}(axis=0) {op} {number}",
        f"{a} = [{b}[k] {op} {c}[k] for k in range(len({b}))]",
        f"{a} = np.asarray({b}, dtype=float)",
    ]
    return rng.choice(forms)


def _learner(rng: random.Random, number: int) -> str:
    names = [f"{rng.choice(_WORDS)}{rng.randrange(3)}" for _ in range(5)]
    parts = ["import numpy as np", ""]
    for function in range(rng.randrange(3, 6)):
        body = [_statement(rng, names) for _ in range(rng.randrange(3, 8))]
        parts += [f"def f{number}_{function}({names[0]}, {names[1]}):"]
        parts += [textwrap.indent(line, "    ") for line in body]
        parts += [f"    return {rng.choice(names)}", ""]
    return "\n".join(parts) + "\n"


def _disguised(source: str, rng: random.Random) -> str:
    """The same code with every name changed, its functions in reverse order, and a comment added."""
    blocks = source.split("\n\n")
    head, functions = blocks[0], blocks[1:]
    text = "\n\n".join([head, *reversed([f for f in functions if f.strip()])]) + "\n"
    for word in _WORDS:
        for digit in range(3):
            text = text.replace(f"{word}{digit}", f"{word}_copy{digit}")
    return "# my own work\n" + text.replace("def f", "def g")


def make_class(learners: int, seed: int = 0) -> tuple[dict[str, dict[str, str]], set[tuple[str, str]]]:
    """The generated class (learner -> files) and the planted copies, as sorted pairs."""
    rng = random.Random(seed)
    code = {f"l{n:05d}": {"solution.py": _learner(rng, n)} for n in range(learners)}
    planted = set()
    for n in range(0, learners - 1, 100):
        original, copy = f"l{n:05d}", f"l{n + 1:05d}"
        code[copy] = {"solution.py": _disguised(code[original]["solution.py"], rng)}
        planted.add((original, copy))
    return code, planted


_COPYDETECT = """
import sys, time
from copydetect import CopyDetector
start = time.perf_counter()
detector = CopyDetector(test_dirs=[sys.argv[1]], extensions=["py"], display_t=0.5, silent=True, autoopen=False)
detector.run()
print(f"{time.perf_counter() - start:.2f}")
"""


def _copydetect_seconds(python: str, code: dict[str, dict[str, str]]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        for name, files in code.items():
            (Path(folder) / f"{name}.py").write_text(files["solution.py"], encoding="utf-8")
        done = subprocess.run([python, "-c", _COPYDETECT, folder], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=5000)
    parser.add_argument("--copydetect", metavar="PYTHON", default=None)
    args = parser.parse_args()
    code, planted = make_class(args.learners)
    tokens = sum(len(files["solution.py"].split()) for files in code.values())
    start, cpu = time.perf_counter(), time.process_time()
    found = find_similar(code, limit=max(50, len(planted)))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    top = {(pair.first, pair.second) for pair in found.pairs[: len(planted)]}
    pairs_all = args.learners * (args.learners - 1) // 2
    print(f"{args.learners} learners, about {tokens // args.learners} words each, {len(planted)} planted copies")
    print(f"find_similar: {seconds:.2f} s ({cpu:.2f} s of CPU); {found.candidate_pairs} candidate pairs of {pairs_all}")
    missed = sorted(planted - top)
    ranks = {(pair.first, pair.second): rank for rank, pair in enumerate(found.pairs, start=1)}
    print(
        "planted copies not among the first: "
        + ", ".join(f"{pair} at {ranks.get(pair, 'unlisted')}" for pair in missed)
    )
    print(f"rare limit: {found.rare_limit} learners")
    print(f"planted copies among the first {len(planted)} listed: {len(top & planted)}")
    if args.copydetect:
        print(f"copydetect 0.5 on the same files: {_copydetect_seconds(args.copydetect, code)} s")


if __name__ == "__main__":
    main()
