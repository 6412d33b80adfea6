"""How the warm parent starts: early for ``grader grade``, without site processing, numpy.random when idle."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from grader.checks.base import Call
from grader.cli import command_named
from grader.cli.commands import started_as_the_program
from grader.sandbox import warm_parent as client
from grader.sandbox.calls import encode_calls
from grader.sandbox.runner import LearnerProcess
from grader.sandbox.warm_parent import WarmParent


def _call(warm_parent: WarmParent, source: str, function: str = "f"):  # type: ignore[no-untyped-def]
    with LearnerProcess(warm_parent, {"m.py": source.encode()}, "m.py", [function]) as process:
        assert process.start().status == "ok"
        encoded = encode_calls([Call(function, {})])
        return process.call_many(encoded)[0]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["grader", "grade", "x.py"], "grade"),
        (
            ["grader", "--exercises", "grade", "batch", "d"],
            "batch",
        ),  # a folder named like a command is the option's value
        (["grader", "--exercises=e", "grade", "x.py"], "grade"),
        (["grader", "--version"], None),
        (["grader"], None),
    ],
)
def test_the_command_is_found_past_the_group_options(argv: list[str], command: str | None) -> None:
    assert command_named(argv) == command


@pytest.mark.parametrize(
    ("argv", "orig_argv", "program"),
    [
        (["/venv/bin/grader", "grade", "x.py"], ["/venv/bin/python", "/venv/bin/grader", "grade", "x.py"], True),
        (["-m", "grade", "x.py"], ["python", "-m", "grader.cli", "grade", "x.py"], True),  # argv[0] while importing
        (["-m", "grade"], ["python", "-I", "-mgrader.cli", "grade"], True),
        (["-c", "grade"], ["python", "-c", "import grader.cli", "grade"], False),
        (["-m", "grade"], ["python", "-m", "pytest", "grade"], False),  # another program importing the CLI
        (["/venv/bin/graderx", "grade"], ["python", "/venv/bin/graderx", "grade"], False),
    ],
)
def test_the_program_is_recognised_as_its_script_and_under_dash_m(
    argv: list[str], orig_argv: list[str], program: bool
) -> None:
    assert started_as_the_program(argv, orig_argv) is program


@pytest.mark.slow
def test_a_warm_parent_started_early_is_the_one_the_command_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "_EARLY", [])
    client.start_early()
    client.start_early()  # at most one waits
    early = client.waiting_early()[0]
    try:
        assert WarmParent.start() is early and client.waiting_early() == []
        later = WarmParent.start()
        try:
            assert later is not early
        finally:
            later.close()
        assert _call(early, "def f():\n    return 1.0\n").value == 1.0
    finally:
        early.close()


@pytest.mark.slow
def test_learner_code_has_exit_and_quit_although_site_never_ran() -> None:
    """The warm parent runs with ``-S``; ``exit()`` must still end a learner's call as it does in any Python."""
    with WarmParent.start() as warm_parent:
        outcome = _call(warm_parent, "def f():\n    exit(3)\n")
        quitting = _call(warm_parent, "def f():\n    return float(callable(quit))\n")
    assert outcome.status != "ok" and outcome.error is not None and outcome.error["type"] == "SystemExit"
    assert quitting.value == 1.0


@pytest.mark.slow
def test_numpy_is_found_even_when_the_site_folders_named_do_not_hold_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numpy installed where only site's own processing finds it: the warm parent runs site after all."""
    monkeypatch.setattr(client, "_site_dirs", lambda: ["/nonexistent"])
    with WarmParent.start() as warm_parent:
        outcome = _call(warm_parent, "import numpy as np\ndef f():\n    return np.arange(3.0)\n")
        assert outcome.value.tolist() == [0, 1, 2]


@pytest.mark.slow
def test_a_learner_forked_before_numpy_random_was_imported_can_still_draw() -> None:
    """The warm parent imports numpy.random only when idle; a learner forked earlier imports it, confined."""
    # Its first spawn arrives while the early self-test runs: before the idle import.
    with WarmParent.start() as warm_parent:
        outcome = _call(
            warm_parent, "import numpy as np\ndef f():\n    return np.random.default_rng(0).normal(size=3)\n"
        )
    assert np.array_equal(outcome.value, np.random.default_rng(0).normal(size=3))


def test_the_subtree_listing_agrees_with_a_scan_of_every_process() -> None:
    """After each learner the warm parent lists its descendants (to kill escaped daemons) from their own
    ``children`` files; that must find exactly what scanning every process finds, zombies apart."""
    import os
    import subprocess
    import time

    from grader.sandbox.process_tree import children_map as _children_map
    from grader.sandbox.process_tree import scan_all as _scan_all

    def below(tables, root):  # type: ignore[no-untyped-def]
        found, queue = {}, [root]
        while queue:
            parent = queue.pop()
            for table in tables:
                for child in table.get(parent, []):
                    found[child] = (parent, table is tables[1])
                    queue.append(child)
        return found

    family = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30"])
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    listed: dict = {}
    try:
        time.sleep(0.3)
        me = os.getpid()
        listed, scanned = below(_children_map(me), me), below(_scan_all(), me)
        assert listed == scanned
        assert listed[zombie] == (me, True) and listed[family.pid] == (me, False)
        assert any(parent == family.pid for parent, _ in listed.values())  # the grandchild is found too
    finally:
        for pid, (parent, _) in listed.items():
            if parent == family.pid:
                os.kill(pid, 9)
        family.kill()
        family.wait()
        os.waitpid(zombie, 0)


@pytest.mark.slow
def test_a_warm_parent_closed_without_waiting_still_ends() -> None:
    """``grader grade`` does not wait for its warm parent to exit; it must exit all the same, learners with it."""
    import time

    warm_parent = WarmParent.start()
    learner = LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 1.0\n"}, "m.py", ["f"])
    assert learner.start().status == "ok"
    process, pid = warm_parent.process, learner.pid
    warm_parent.close(wait=False)
    assert process is not None and pid is not None
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    learner._pid = None  # already gone: close only its pipes and scratch folder
    learner.close()


def test_a_warm_parent_left_with_a_reply_unread_ends_by_its_own_shutdown() -> None:
    """``grader grade`` ends its learner with ``finish_later`` and leaves without reading the reply: the warm
    parent's next read then fails (the socket was reset, not closed empty), and it must still take its way
    out, which kills what is left of its learners, rather than die of the error with a traceback."""
    import time

    warm_parent = WarmParent.start()
    learner = LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 1.0\n"}, "m.py", ["f"])
    assert learner.start().status == "ok"
    learner.close(wait=False)  # the reply to its finish is owed
    process = warm_parent.process
    assert process is not None
    stderr = os.dup(warm_parent._stderr.fileno())
    try:
        time.sleep(0.2)  # the reply is sent, and waits unread in our end of the socket
        warm_parent.close(wait=False)
        assert process.wait(timeout=10) == 0
        os.lseek(stderr, 0, os.SEEK_SET)
        assert os.read(stderr, 65536) == b""
    finally:
        os.close(stderr)


@pytest.mark.slow
def test_a_learner_ended_without_waiting_is_gone_before_the_next_one_starts() -> None:
    """``close(wait=False)`` (a graded submission): the grader moves on; its folder is emptied once the process is
    gone (the warm parent's reply comes with the next request's), and only then handed to a later process,
    which finds none of the first one's files there."""
    with WarmParent.start() as warm_parent:
        first = LearnerProcess(
            warm_parent, {"m.py": b"def f():\n    return 1.0\n", "secret.py": b"X = 1\n"}, "m.py", ["f"]
        )
        assert first.start().status == "ok"
        pid, scratch = first.pid, first.scratch_folder
        assert pid is not None and scratch is not None and os.path.isdir(scratch)
        first.close(wait=False)
        assert first.end is not None and not first.alive
        with LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 2.0\n"}, "m.py", ["f"]) as second:
            assert second.start().status == "ok"  # served after the warm parent ended the first
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
            assert second.scratch_folder != scratch and os.listdir(scratch) == []  # emptied, kept for a later one
            used = [scratch, second.scratch_folder]
        third = LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 3.0\n"}, "m.py", ["f"])
        assert third.start().status == "ok"
        assert third.scratch_folder in used and os.listdir(third.scratch_folder) == ["m.py"]
        calls = encode_calls([Call("f", {})])
        assert float(third.call_many(calls)[0].values[0]) == 3.0
        third.close(wait=False)
    assert not any(os.path.exists(folder) for folder in used)  # closing the warm parent removes what it kept


OPEN_DESCRIPTORS = """
import os
import numpy as np

def f():
    found = []
    for fd in range(1024):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return np.array(found, dtype=float)
"""


@pytest.mark.slow
def test_a_learner_process_holds_only_its_pipes_of_what_the_warm_parent_had_open() -> None:
    """The warm parent's ~280 Landlock descriptors, its socket and other learners' pipes are closed in the learner
    (with ``close_range``, one call per gap between the descriptors kept)."""
    with WarmParent.start() as warm_parent:
        outcome = _call(warm_parent, OPEN_DESCRIPTORS)
    assert outcome.status == "ok", outcome
    held = [int(fd) for fd in outcome.values[0]]
    assert held == [0, 1, 2, 3, 4], held  # stdin, output twice, then requests and answers (renumbered low)


@pytest.mark.parametrize("close_range", [True, False], ids=["close_range", "kernel-without-close_range"])
def test_closing_inherited_descriptors_keeps_exactly_the_runs_asked_for(
    monkeypatch: pytest.MonkeyPatch, close_range: bool
) -> None:
    from grader.sandbox import descriptors

    if not close_range:  # a kernel before 5.9: the descriptors are listed instead
        monkeypatch.setattr(descriptors, "close_range", lambda first, last: -1)
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            extra = [os.open("/dev/null", os.O_RDONLY) for _ in range(6)]
            # Not always adjacent.
            keep = descriptors.runs([0, 1, 2, report_w, extra[4]], descriptors.runs([extra[1], extra[2]]))
            descriptors.close_inherited(keep)
            left = [fd for fd in range(1024) if _is_open(fd)]
            os.write(report_w, json.dumps([left, sorted({0, 1, 2, report_w, extra[1], extra[2], extra[4]})]).encode())
        finally:
            os._exit(0)
    os.close(report_w)
    left, wanted = json.loads(os.read(report_r, 65536))
    os.close(report_r)
    os.waitpid(pid, 0)
    assert left == wanted


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@pytest.mark.slow
def test_calls_sent_with_the_import_arrive_whole_when_they_outgrow_the_pipe() -> None:
    """A new process imports its file before it reads a request, so its ``ready`` can come back while the calls
    sent along are still being written (here: more than the 1 MiB pipe holds). The rest is written afterwards;
    it used to be dropped, and the process then waited for it until the call's deadline."""
    big = np.arange(300_000, dtype=float)  # 2.4 MB: never written before the import is done
    with (
        WarmParent.start() as warm_parent,
        LearnerProcess(warm_parent, {"m.py": b"def f(x):\n    return x.sum()\n"}, "m.py", ["f"]) as process,
    ):
        process.call_seconds = 5.0
        calls = encode_calls([Call("f", {"x": big})])
        assert process.start(calls).status == "ok"
        outcome = process.call_many(calls, batch=True)[0]
    assert outcome.status == "ok", outcome
    assert float(outcome.values[0]) == float(big.sum())


CONFINED = """
import ctypes
import os
import numpy as np

def f(outside):
    def readable(path):
        try:
            with open(path, "rb") as handle:
                handle.read(1)
            return 1.0
        except OSError:
            return 0.0
    libc = ctypes.CDLL(None, use_errno=True)
    refused = all(libc.syscall(ctypes.c_long(445), ctypes.c_long(fd), ctypes.c_long(1), None, ctypes.c_long(0)) < 0
                  for fd in range(3, 64))  # landlock_add_rule, on any descriptor it may hold
    return np.array([readable(os.path.join(os.path.dirname(__file__), "own.txt")), readable(outside), float(refused)])
"""


@pytest.mark.slow
def test_learner_processes_sharing_a_scratch_folder_are_each_confined_by_its_ruleset(tmp_path) -> None:
    """A folder handed out again gets the ruleset its warm parent built the first time: each process can read its
    own files and nothing outside, and cannot add a rule to the ruleset the next process will be confined with."""
    outside = tmp_path / "outside.txt"
    outside.write_text("not for learners")
    seen = []
    with WarmParent.start() as warm_parent:
        if not warm_parent.facts.get("landlock_abi"):
            pytest.skip("Landlock is not available here")
        for _ in range(3):
            with LearnerProcess(warm_parent, {"m.py": CONFINED.encode(), "own.txt": b"mine"}, "m.py", ["f"]) as process:
                assert process.start().status == "ok"
                seen.append(process.scratch_folder)
                calls = encode_calls([Call("f", {"outside": str(outside)})])
                outcome = process.call_many(calls)[0]
                assert outcome.status == "ok", outcome
                assert list(outcome.values[0]) == [1.0, 0.0, 1.0]
    assert seen[0] == seen[1] == seen[2]  # the same folder each time: the ruleset was built once


@pytest.mark.slow
def test_calls_sent_with_the_import_are_collected_even_once_their_encoding_is_forgotten() -> None:
    """The answers to calls sent ahead are collected by a batch of the same calls, whether or not the encoded
    request is still remembered (a long session forgets it) and whichever object carries the calls: matching
    is by the batch's key. They used to be refused as 'busy with other calls'."""
    from grader.sandbox.memory import SandboxMemo
    from grader.sandbox.requests import RequestMemo

    memo = SandboxMemo()
    with (
        WarmParent.start() as warm_parent,
        LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 4.0\n"}, "m.py", ["f"], memo=memo) as process,
    ):
        assert process.start(encode_calls([Call("f", {})])).status == "ok"
        memo.requests = RequestMemo()
        outcome = process.call_many(encode_calls([Call("f", {})]), batch=True)[0]
    assert outcome.status == "ok", outcome
    assert float(outcome.values[0]) == 4.0


def test_process_usage_reads_cpu_memory_and_threads_of_a_live_process_only() -> None:
    from grader.sandbox.process_tree import process_usage

    usage = process_usage(os.getpid())
    assert usage is not None
    cpu, resident, threads = usage
    assert cpu > 0 and resident > 1_000_000 and threads >= 1
    assert process_usage(2**22 + 12345) is None  # no such process
