"""The learner process's call loop replayed in one process: what it costs beyond the learner's own calls.

Run from the repository root:  python benchmarks/learner_loop.py [--runs 25]

For every implementation exercise of ``all``, the reference solution is imported from a scratch
folder and answers its plan's whole first request (``Plan.whole``), as a learner process of a batch
does: the request preloaded where the warm parent would hold it (``arguments.preload``: each call
gets fresh copies of decoded arguments), each call run by ``child.run_call`` under the batch's
float-error record, the answers gathered by ``answer_batches.Answers`` into the bytes a learner
process writes to its pipe. Beside it the bare calls: the same functions on the same arguments,
decoded beforehand, with nothing around them. Both are timed in turns; the minimum of each is
printed (this loop runs no other process, so the minimum is its cost on a quiet machine), with the
difference per call. Then the loop again with answers not gathered, and with values not encoded,
for each step's share.

The digest is of every byte the loop wrote, with batches cut by size alone (a learner process also
cuts one every 10 ms, which no two runs do alike): a change to the loop that should not change what a
learner process sends must print the same one. Nothing runs sandboxed and nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from grader.engine.instructor_runs import given_source  # noqa: E402
from grader.engine.plan import build_plan, checks_to_run  # noqa: E402
from grader.sandbox import answer_batches, child  # noqa: E402
from grader.sandbox.arguments import preload, requested_calls, set_given_source  # noqa: E402
from grader.sandbox.learner_errors import FloatEvents  # noqa: E402
from grader.sandbox.printing import PrintTally  # noqa: E402
from grader.sandbox.protocol import encode_message  # noqa: E402
from grader.sandbox.requests import needs_trusted  # noqa: E402
from grader.sandbox.scripts import run_script  # noqa: E402
from grader.spec.loader import load_catalog  # noqa: E402
from grader.spec.models import ImplementationExercise  # noqa: E402

Job = tuple[Any, dict[str, Any], list[bytes]]  # the imported solution, its request, the request's payloads


class _Pipe:
    """Where the answers go: kept, to be digested after the clock stops."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes | bytearray) -> None:
        self.parts.append(bytes(data))

    def digest(self) -> str:
        return hashlib.blake2b(b"".join(self.parts), digest_size=8).hexdigest()


def prepare(scratch: str) -> list[Job]:
    """Each exercise's reference solution, imported from ``scratch``, and its plan's first request."""
    catalog = load_catalog(ROOT / "exercises")
    jobs = []
    for exercise in catalog.assignment("all"):
        if not isinstance(exercise, ImplementationExercise):
            continue
        _, batch = build_plan(exercise, checks_to_run(exercise, False)).whole()
        request: dict[str, Any] = {"op": "call_many", "calls": batch.calls, "batch": True}
        if needs_trusted(batch.calls):  # as the grader sends it: never preloaded, the given file's source along
            request["given_source"] = given_source(exercise, catalog.root)
        else:
            message = encode_message({"op": "call_many", "calls": batch.calls}, batch.blobs)
            key = hashlib.blake2b(message, digest_size=16).hexdigest()
            if preload(key, message):
                request = {"op": "call_many", "preloaded": key, "count": len(batch.calls), "batch": True}
        path = Path(scratch) / f"{exercise.id.replace('-', '_')}.py"
        shutil.copy(ROOT / exercise.reference_solution, path)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        jobs.append((module, request, batch.blobs))
    return jobs


def loop(jobs: list[Job], scratch: str) -> tuple[float, str]:
    """Seconds for the learner process's loop over every job, and the digest of what it wrote."""
    pipe = _Pipe()
    started = time.perf_counter()
    for module, request, blobs in jobs:
        set_given_source(request.get("given_source"))
        # Batches cut by size only (a learner process also sends one every 10 ms), so the bytes are the same
        # from run to run.
        answers = answer_batches.Answers(pipe, batched=True, every=float("inf"), printed=PrintTally())
        floats = FloatEvents(scratch)
        with floats.watching():
            for index, (call, arguments) in enumerate(requested_calls(request, blobs)):
                answers.add(*child.run_call(module, index, call, arguments, scratch, floats))
        answers.flush()
    took = time.perf_counter() - started
    return took, pipe.digest()


def bare(jobs: list[Job]) -> float:
    """Seconds for the same calls alone, on arguments decoded before the clock starts."""
    took = 0.0
    for module, request, blobs in jobs:
        set_given_source(request.get("given_source"))
        pairs = [(call, arguments()) for call, arguments in requested_calls(request, blobs)]
        started = time.perf_counter()
        with np.errstate(all="ignore"):
            for call, (args, kwargs) in pairs:
                function = getattr(module, call["fn"])
                try:
                    run_script(function, args[0]) if "script" in call else function(*args, **kwargs)
                except Exception:  # noqa: BLE001, S110 - a call meant to raise raises here too
                    pass
        took += time.perf_counter() - started
    return took


def _least(runs: int, measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(runs)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    options = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="grader-loop-")
    try:
        jobs = prepare(scratch)
        calls = sum(int(request.get("count", len(request.get("calls", [])))) for _, request, _ in jobs)
        loop(jobs, scratch), bare(jobs)  # first calls of each numpy path, off the clock
        digests, loops, bares = set(), [], []
        for _ in range(options.runs):  # in turns, so a machine that drifts slows both alike
            took, digest = loop(jobs, scratch)
            loops.append(took)
            digests.add(digest)
            bares.append(bare(jobs))
        whole, alone = min(loops) * 1000, min(bares) * 1000
        print(f"{calls} calls of {len(jobs)} exercises, {options.runs} runs in turns, least of each:")
        print(f"  {whole:6.1f} ms  the learner process's loop")
        print(f"  {alone:6.1f} ms  the bare calls")
        print(f"  {(whole - alone) / calls * 1000:6.1f} us  a call, beyond the learner's own work")
        add, encode = answer_batches.Answers.add, child.encode_result
        try:
            answer_batches.Answers.add = lambda self, header, payloads: None  # type: ignore[method-assign]
            unsent = _least(options.runs, lambda: loop(jobs, scratch)[0])
            child.encode_result = lambda value: ("single", ["ndarray"], [], [])
            unencoded = _least(options.runs, lambda: loop(jobs, scratch)[0])
        finally:
            answer_batches.Answers.add, child.encode_result = add, encode  # type: ignore[method-assign]
        print(f"  {whole - unsent:6.1f} ms  of the loop: gathering answers into batches")
        print(f"  {unsent - unencoded:6.1f} ms  of the loop: encoding values")
        print(f"  {unencoded - alone:6.1f} ms  of the loop: the rest (fresh arguments, float errors, headers)")
        print(f"  digest of what the loop wrote: {', '.join(sorted(digests))}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
