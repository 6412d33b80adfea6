"""The processes of a batch: grading processes forked with clones of one warm parent, and their ends.

``grader batch`` forks its grading processes from itself and gives each a
clone of its warm parent (``WarmParent.clone``). These tests hold the promises
that come with that: a clone grades like a warm parent of its own, needs no
second self-test, ends with its client, and nothing of a batch outlives it,
even when the batch is SIGKILLed; a second batch on the same output folder is
still refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, affinity_worker_main, make_class, make_exercises

from grader.batch import run_batch
from grader.batch.executors import LocalPool
from grader.batch.worker import Task, WorkerConfig
from grader.errors import UsageError
from grader.grading import GradingSession
from grader.sandbox.calls import CallBatch
from grader.sandbox.front import Sandbox
from grader.sandbox.runner import Layers, Limits
from grader.sandbox.warm_parent import WarmParent

pytestmark = pytest.mark.slow


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] not in (b"Z", b"X"):
                tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, found, queue = _children(), set(), [pid]
    while queue:
        for child in tree.get(queue.pop(), []):
            found.add(child)
            queue.append(child)
    return found


def _alive(pids: set[int]) -> set[int]:
    left = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            left.add(pid)
    return left


def _wait(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_clone_grades_like_its_parent_and_inherits_its_self_test(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text(CORRECT, encoding="utf-8")
    with WarmParent.start() as parent:
        factory = Sandbox(parent, Limits(), Layers.from_environment())
        parent_test = factory.self_test()
        twin = parent.clone()
        try:
            assert twin.facts == parent.facts
            assert twin.__dict__["self_tests"] == parent.__dict__["self_tests"]  # nothing to run again
            assert Sandbox(twin, Limits(), Layers.from_environment()).self_test() is parent_test
            with GradingSession(warm_parent=twin, only=["stable-softmax"]) as session:
                report = session.grade(tmp_path / "answer.py", exercise_ids=["stable-softmax"])
            assert report.score == report.max_score > 0
            assert report.sandbox.tier == factory.info().tier
        finally:
            twin.close()


def test_clone_ends_with_its_client_and_with_its_parent() -> None:
    with WarmParent.start() as parent:
        first, second = parent.clone(), parent.clone()
        assert parent.process is not None
        clones = set(_children().get(parent.process.pid, []))
        assert len(clones) == 2
        first.close()
        assert _wait(lambda: len(_alive(clones)) == 1), "a clone whose client closed should end"
    assert _wait(lambda: not _alive(clones)), "the warm parent should end its clones when it stops"
    second.close()


def test_nothing_of_a_killed_batch_outlives_it(tmp_path: Path) -> None:
    exercises = make_exercises(tmp_path)
    folder = make_class(tmp_path / "class")
    for index in range(12):  # enough learners that grading is still under way when the batch is killed
        (folder / f"extra{index:02d}.py").write_text(CORRECT + f"# learner {index}\n", encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "grader.cli",
        "--exercises",
        str(exercises),
        "batch",
        str(folder),
        "--assignment",
        ASSIGNMENT,
        "--out",
        str(tmp_path / "out"),
        "--jobs",
        "2",
    ]
    batch = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The warm parent, its two clones and two grading processes; learner processes come and go.
        assert _wait(lambda: len(_descendants(batch.pid)) >= 5, 60), "the batch never started its processes"
        family = _descendants(batch.pid)
    finally:
        batch.send_signal(signal.SIGKILL)
        batch.wait()
    assert _wait(lambda: not _alive(family)), f"still running after the batch was killed: {_alive(family)}"


def test_second_batch_on_one_output_folder_is_refused(tmp_path: Path) -> None:
    exercises = make_exercises(tmp_path)
    folder = make_class(tmp_path / "class")
    out = tmp_path / "out"
    out.mkdir()
    hold = (
        "import sys, time\nfrom pathlib import Path\nfrom grader.batch.lock import OutputLock\n"
        "with OutputLock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", hold, str(out)], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            with pytest.raises(UsageError, match="another 'grader batch' is writing there"):
                run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=exercises)
        finally:
            holder.kill()


def test_a_clone_starts_with_its_parents_idle_work_done() -> None:
    """The idle work (importing numpy.random) is done before cloning: each worker's learners find it imported."""
    from grader.sandbox.runner import LearnerProcess

    source = b"import sys\nLOADED = 'numpy.random' in sys.modules\n\ndef probe():\n    return float(LOADED)\n"
    with WarmParent.start() as parent:
        twin = parent.clone()  # at once: the parent has had no quiet moment for its idle work
        process = LearnerProcess(twin, {"probe.py": source}, "probe.py", ["probe"])
        try:
            assert process.start().status == "ok"
            (outcome,) = process.call_many(CallBatch.of([{"fn": "probe", "args": [], "return_inputs": False}]))
            assert outcome.status == "ok" and float(outcome.value) == 1.0
        finally:
            process.close()
            twin.close()


@pytest.mark.skipif(not 2 <= len(os.sched_getaffinity(0)) <= 8, reason="one core: nothing to keep apart; many: slow")
def test_each_grading_process_keeps_to_a_core_of_its_own_with_its_learners(tmp_path: Path) -> None:
    config = WorkerConfig(exercises_dir=str(make_exercises(tmp_path)), assignment=ASSIGNMENT, spec_digest="")
    jobs = len(os.sched_getaffinity(0))  # one grading process per core, as by default
    tasks = [Task(learner=f"l{index}", path=str(tmp_path), label="") for index in range(2 * jobs)]
    with WarmParent.start() as warm_parent:
        pool = LocalPool(config, jobs, warm_parent=warm_parent, worker_main=affinity_worker_main)
        found = [json.loads(outcome.result_json) for _, outcome in pool.map(tasks)]
    assert len(found) == 2 * jobs
    core_of = {entry["pid"]: entry["core"] for entry in found}
    assert len(set(core_of.values())) == len(core_of)  # no two grading processes share a core
    assert set(core_of.values()) <= os.sched_getaffinity(0)
    for entry in found:  # the grading process, its clone of the warm parent and every learner it forks
        assert entry["worker"] == entry["warm_parent"] == entry["learner"] == [entry["core"]]


def test_grading_processes_keep_to_cores_only_with_one_for_every_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.batch.affinity import cores_to_use

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 1, 2, 0})
    assert cores_to_use(4) == [0, 1, 2, 3]
    assert cores_to_use(2) is None  # fewer than cores: the system knows which are free
    assert cores_to_use(5) is None  # two would share a core while another might idle
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {7})
    assert cores_to_use(1) is None  # nothing to choose
    assert LocalPool(WorkerConfig("x", "all", ""), 2, pin=False)._free_core() is None


def test_a_learner_process_reuses_the_memory_of_its_last_large_array() -> None:
    """Blocks up to 4 MiB come from malloc's heap and stay there once freed.

    See ``warm_parent_server._keep_freed_memory``.
    """
    from grader.sandbox.runner import LearnerProcess

    source = (
        b"import resource\nimport numpy as np\n\ndef probe():\n"
        b"    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        b"    np.ones(1 << 18).sum()\n"  # 2 MiB, written, then freed
        b"    return float(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults)\n"
    )
    with WarmParent.start() as warm_parent:
        process = LearnerProcess(warm_parent, {"probe.py": source}, "probe.py", ["probe"])
        try:
            assert process.start().status == "ok"
            call = {"fn": "probe", "args": [], "return_inputs": False}
            first, second = process.call_many(CallBatch.of([call, call]))
        finally:
            process.close()
    assert first.status == second.status == "ok"
    assert float(first.value) >= 256  # the first fills fresh pages: 512 of them
    assert float(second.value) < 64, f"the second array of 2 MiB faulted {float(second.value):.0f} pages in again"


def test_a_learner_sent_to_a_process_that_has_just_died_goes_back_to_the_queue() -> None:
    """Learners are sent ahead to busy processes; one may die meanwhile. The send fails, the learner is not
    blamed on it (it never had it), and the pool does not stop: the next process takes it."""
    from grader.batch.executors import Slot
    from grader.batch.worker import Task

    class Dead:
        def send(self, task: object) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    pool = LocalPool(WorkerConfig("x", "all", ""), 2, pin=False)
    busy = Slot(process=None, connection=Dead(), ready=True)
    first = Task(learner="a", path="a", label="a")
    busy.tasks.append(first)  # being graded when it died
    pool._slots = [busy]
    pending = [Task(learner=name, path=name, label=name) for name in ("d", "c", "b")]
    pool._send_next(busy, pending)
    assert list(busy.tasks) == [first]
    assert [task.learner for task in pending] == ["d", "c", "b"]
