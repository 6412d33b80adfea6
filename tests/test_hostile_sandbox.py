"""The sandbox's hardening, piece by piece: self-test, tiers and refusal, wording, limits, answers bombs.

The end-to-end hostile corpus is ``test_hostile.py``; these tests pin the
parts it relies on, mostly without spawning the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from bystander import Bystander
from msgspec.structs import asdict

from grader.checks.base import Call
from grader.engine import reasons
from grader.errors import UsageError, WeakSandboxError
from grader.grading import GradingSession, preflight_sandbox, weak_sandbox_allowed
from grader.sandbox import child, learner_errors, selftest
from grader.sandbox.calls import encode_calls
from grader.sandbox.confine.landlock import abi_version
from grader.sandbox.confine.seccomp import available as seccomp_available
from grader.sandbox.front import Sandbox
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.requests import needs_trusted
from grader.sandbox.runner import Layers, LearnerProcess, Limits, WarmParent
from grader.sandbox.untrusted import clean_error
from grader.sandbox.warm_parent import default_self_test
from grader.submission.answers import AnswersProblem, load_answers

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = Path(__file__).resolve().parent / "hostile"
FULL = pytest.mark.skipif(not abi_version() or not seccomp_available(), reason="needs Landlock and seccomp")
ALL_DENIED = {name: "denied" for name in selftest.PROBES}
ALL_LAYERS = Layers()
MACHINE = {"landlock_abi": 7, "seccomp": True, "root": True, "grader_non_dumpable": True}


# -- the self-test's judgement (no processes) --------------------------------


def _judged(
    probes: dict[str, str], layers: Layers = ALL_LAYERS, machine: dict = MACHINE, reached: tuple[str, ...] = ()
) -> selftest.SelfTest:
    return selftest.SelfTest(probes=probes, expected=selftest.expected_denials(machine, layers), reached=reached)


def test_selftest_all_denied_is_tier_a_and_strong() -> None:
    test = _judged(ALL_DENIED)
    assert test.tier == "A" and not test.weak and test.failures == [] and test.unprotected == []


def test_selftest_reads_allowed_is_tier_b_and_names_the_flag() -> None:
    probes = dict(ALL_DENIED, read="allowed", list="allowed")  # the grader's environ stays closed: non-dumpable
    test = _judged(probes, Layers(caps=True, landlock=False, seccomp=True))
    assert test.tier == "B" and test.weak and test.failures == []
    assert test.unprotected == [selftest.PROTECTS[0][2]]
    message = test.refusal(MACHINE, Layers(caps=True, landlock=False, seccomp=True))
    assert "tier B" in message and "--allow-weak-sandbox" in message and "GRADER_SANDBOX_LAYERS" in message
    assert "\n" not in message


def test_selftest_layer_that_should_hold_but_did_not_is_a_failure() -> None:
    test = _judged(dict(ALL_DENIED, read="allowed"))  # Landlock asked for and available, yet the canary was read
    assert test.failures == ["read"] and test.weak and test.tier == "B"
    message = test.refusal(MACHINE, Layers())
    assert message.startswith("the sandbox self-test failed") and "reading a file outside its allow-list" in message
    assert "--allow-weak-sandbox" in message


def test_selftest_a_listener_that_heard_something_counts_even_if_the_child_said_denied() -> None:
    test = _judged(ALL_DENIED, reached=("udp",))
    assert test.failures == ["udp"] and not test.protected("network") and test.tier == "C"


def test_selftest_expectations_follow_the_layers_and_the_machine() -> None:
    landlock_only = selftest.expected_denials(MACHINE, Layers(caps=True, landlock=True, seccomp=False))
    assert landlock_only["read"] and landlock_only["connect"] and landlock_only["signal"]
    assert not landlock_only["fork"] and not landlock_only["udp"]
    old_kernel = selftest.expected_denials(
        dict(MACHINE, landlock_abi=3), Layers(caps=True, landlock=True, seccomp=False)
    )
    assert old_kernel["read"] and not old_kernel["connect"] and not old_kernel["signal"]
    nothing = selftest.expected_denials(MACHINE, Layers(False, False, False))
    assert not any(nothing.values())


# -- the self-test for real, on every set of layers --------------------------


@FULL
@pytest.mark.parametrize(
    "layers, tier",
    [
        ("all", "A"),
        ("caps,seccomp", "B"),
        ("seccomp", "B"),
        ("caps,landlock", "C"),
        ("none", "C"),
    ],
)
@pytest.mark.slow
def test_selftest_on_this_machine_proves_the_expected_tier(
    monkeypatch: pytest.MonkeyPatch, layers: str, tier: str
) -> None:
    monkeypatch.setenv("GRADER_SANDBOX_LAYERS", layers)
    with WarmParent.start() as warm_parent:
        factory = Sandbox(warm_parent, Limits(), Layers.from_environment())
        test = factory.self_test()
        info = factory.info()
    assert test.failures == [], test.probes
    assert test.tier == tier == info.tier, test.probes
    assert info.self_test == {name: test.probes[name] for name in selftest.PROBES}
    if tier == "A":
        assert test.probes == ALL_DENIED and info.warning is None and info.unprotected is None
        assert info.landlock_abi >= 1 and info.seccomp and info.caps_dropped
    else:
        assert info.warning and info.warning.startswith(f"sandbox tier {tier}") and info.unprotected


@FULL
@pytest.mark.parametrize(
    "layers, cap, tier, signal_probe",
    [
        ("all", "5", "A", "denied"),
        ("seccomp", "5", "B", "denied"),
        ("caps,landlock", "5", "C", "allowed"),
    ],
)
@pytest.mark.slow
def test_selftest_with_landlock_before_signal_scoping_rests_signal_denial_on_seccomp(
    monkeypatch: pytest.MonkeyPatch, layers: str, cap: str, tier: str, signal_probe: str
) -> None:
    """With Landlock played at ABI 5 (no signal scoping, as before Linux 6.12), only seccomp stops signals."""
    monkeypatch.setenv("GRADER_SANDBOX_LAYERS", layers)
    monkeypatch.setenv("GRADER_LANDLOCK_ABI_CAP", cap)
    with WarmParent.start() as warm_parent:
        factory = Sandbox(warm_parent, Limits(), Layers.from_environment())
        test = factory.self_test()
        info = factory.info()
        assert warm_parent.facts["landlock_abi"] == 5
    assert test.failures == [] and test.tier == tier == info.tier, test.probes
    assert test.probes["signal"] == signal_probe
    if "landlock" in layers or layers == "all":
        assert info.landlock_abi == 5


_OWNER_PROBE = """
import sys
sys.path.insert(0, {root!r})
from grader.sandbox import selftest
from grader.sandbox.confine import landlock, seccomp
if sys.argv[1] == "seccomp":
    seccomp.install_filter()
elif sys.argv[1] == "landlock":
    paths = landlock.python_read_paths()
    print(landlock.restrict(paths.read_paths, list_paths=paths.list_paths), file=sys.stderr)
print(selftest.signal_through_owner(int(sys.argv[2]), int(sys.argv[3])))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "layer, cap, said, outcome",
    [
        ("none", "", "sent", "allowed"),
        ("seccomp", "5", "denied", "denied"),
        ("landlock", "", "sent", "denied"),
        ("landlock", "5", "sent", "allowed"),
    ],
    ids=["no-layer", "seccomp", "landlock-signal-scoped", "landlock-abi-5"],
)
def test_signal_probe_through_a_descriptor_owner_is_judged_by_what_the_bait_received(
    layer: str, cap: str, said: str, outcome: str
) -> None:
    """The probe says ``sent`` when it could make a descriptor signal the bait's thread; the bait, which blocks
    that signal, says whether it arrived: Landlock's signal scoping (ABI >= 6) stops it on delivery."""
    if layer == "seccomp" and not seccomp_available():
        pytest.skip("seccomp filters are not available here")
    if layer == "landlock" and abi_version() < (1 if cap else 6):
        pytest.skip("needs Landlock with signal scoping")
    bait = selftest.Bait(os.getpid())
    try:
        env = dict(os.environ, GRADER_LANDLOCK_ABI_CAP=cap)
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                _OWNER_PROBE.format(root=str(ROOT)),
                layer,
                str(os.getpid()),
                str(bait.spec["signal_thread"]),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [said], done.stderr
        found = bait.outcome({"probes": {"signal": said}})
    finally:
        bait.close()
    assert found["probes"]["signal"] == outcome
    assert ("signal" in found["reached"]) is (outcome == "allowed")
    assert not {signal.SIGURG, signal.SIGIO} & signal.pthread_sigmask(signal.SIG_BLOCK, [])  # unblocked again
    test = selftest.judge(found, MACHINE, Layers())
    assert test.held("signal") is (outcome == "denied")


def test_the_default_early_self_test_confines_like_a_default_session() -> None:
    assert default_self_test() == {"limits": Limits().child_limits(), "layers": asdict(Layers())}


@FULL
@pytest.mark.slow
def test_every_warm_parent_runs_the_self_test_early_and_hands_it_over_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_SANDBOX_LAYERS", "all")
    monkeypatch.delenv("GRADER_CPU_SECONDS", raising=False)
    for _ in range(2):  # nothing carries over from one warm parent to the next
        with WarmParent.start() as warm_parent:
            factory = Sandbox(warm_parent, Limits(), Layers.from_environment())
            monkeypatch.setattr(warm_parent, "spawn", lambda *_: pytest.fail("the grader ran a self-test of its own"))
            test = factory.self_test()
            confinement = {"limits": Limits().child_limits(), "layers": asdict(Layers())}
            assert warm_parent.early_self_test(confinement) is None  # handed over once
        assert test.probes == ALL_DENIED and test.tier == "A" and test.failures == [] and not test.weak


@FULL
@pytest.mark.slow
def test_a_session_confined_otherwise_runs_its_own_self_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_SANDBOX_LAYERS", "all")
    monkeypatch.delenv("GRADER_CPU_SECONDS", raising=False)
    with WarmParent.start() as warm_parent:
        test = Sandbox(warm_parent, Limits(), Layers(caps=True, landlock=False, seccomp=True)).self_test()
    assert test.tier == "B" and test.probes["read"] == "allowed" and test.failures == []


@pytest.mark.slow
def test_grader_process_becomes_non_dumpable_when_it_starts_the_sandbox() -> None:
    code = (
        "import ctypes\nfrom grader.sandbox.warm_parent import WarmParent\n"
        "libc = ctypes.CDLL(None)\nbefore = libc.prctl(3, 0, 0, 0, 0)\n"
        "z = WarmParent.start(); z.facts\nafter = libc.prctl(3, 0, 0, 0, 0)\n"
        "print(before, after, z.facts['non_dumpable']); z.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.split() == ["1", "0", "True"], done.stderr


# -- refusing hidden checks on a weak sandbox (the API; the CLI is in test_hostile) -------


def test_weak_sandbox_error_is_a_usage_error() -> None:
    assert issubclass(WeakSandboxError, UsageError) and WeakSandboxError.exit_code == 2


@pytest.mark.slow
def test_session_refuses_hidden_checks_at_tier_c_unless_allowed(tmp_path: Path) -> None:
    learner = tmp_path / "mine.py"
    learner.write_text((ROOT / "solutions" / "stable-softmax" / "reference.py").read_text())
    weak = Layers(False, False, False)
    with GradingSession(exercises_dir=ROOT / "exercises", layers=weak, allow_weak_sandbox=False) as session:
        with pytest.raises(WeakSandboxError, match="--allow-weak-sandbox"):
            session.grade(learner, exercise_ids=["stable-softmax"])
        public = session.grade(learner, exercise_ids=["stable-softmax"], public_only=True)
        assert public.sandbox is not None and public.sandbox.tier == "C" and public.sandbox.warning
    with GradingSession(exercises_dir=ROOT / "exercises", layers=weak, allow_weak_sandbox=True) as session:
        report = session.grade(learner, exercise_ids=["stable-softmax"])
    assert report.exercises[0].status == "passed"
    assert report.sandbox is not None and "--allow-weak-sandbox" in (report.sandbox.warning or "")


def test_allow_weak_sandbox_reads_the_environment_only_without_a_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_ALLOW_WEAK_SANDBOX", "1")
    assert weak_sandbox_allowed(None) is True and weak_sandbox_allowed(False) is False
    monkeypatch.delenv("GRADER_ALLOW_WEAK_SANDBOX")
    assert weak_sandbox_allowed(None) is False


@FULL
@pytest.mark.slow
def test_preflight_refuses_tier_b_and_passes_tier_a(monkeypatch: pytest.MonkeyPatch) -> None:
    assert preflight_sandbox().tier == "A"
    monkeypatch.setenv("GRADER_SANDBOX_LAYERS", "seccomp")
    with pytest.raises(WeakSandboxError, match="tier B"):
        preflight_sandbox()
    assert preflight_sandbox(allow_weak_sandbox=True).tier == "B"


# -- nothing survives, even with seccomp off ----------------------------------


def _marked(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path("/proc", entry, "comm").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    "layers",
    [Layers(caps=True, landlock=True, seccomp=False), Layers(False, False, False)],
    ids=["landlock-only", "no-layers"],
)
def test_setsid_daemon_ignoring_sigterm_is_killed_without_seccomp(layers: Layers) -> None:
    marker = f"hxd{os.getpid() % 100000}"
    source = (HOSTILE / "setsid_daemon.py").read_text().replace("__MARKER__", marker)
    with WarmParent.start() as warm_parent:
        process = LearnerProcess(
            warm_parent, {"attack.py": source.encode()}, "attack.py", ["softmax"], Limits(), layers
        )
        assert process.start().status == "ok"
        calls = encode_calls([Call("softmax", {"z": np.array([1.0, 2.0])})] * 3)
        # The attack returns a string, which now comes back as a value: every call was answered.
        assert [(o.status, o.value) for o in process.call_many(calls)] == [("ok", "daemon started")] * 3
        deadline = time.monotonic() + 5
        while len(_marked(marker)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        daemons = _marked(marker)
        assert len(daemons) == 3  # they really ran: forked, setsid, forked again, ignoring SIGTERM
        for pid in daemons:
            os.kill(pid, signal.SIGTERM)  # ignored, as promised
        time.sleep(0.1)
        assert sorted(_marked(marker)) == sorted(daemons)
        process.close()
        assert _marked(marker) == []


# -- other processes: no signal without kill(), no re-scheduling -----------------


@pytest.mark.slow
@FULL
@pytest.mark.parametrize(
    "layers, cap",
    [
        (Layers(), "5"),
        (Layers(caps=True, landlock=False, seccomp=True), ""),
        (Layers(), ""),
    ],
    ids=["tier-a-landlock-abi-5", "tier-b", "tier-a"],
)
def test_learners_cannot_signal_or_reschedule_the_warm_parent_or_a_bystander(
    monkeypatch: pytest.MonkeyPatch, layers: Layers, cap: str
) -> None:
    """The attacks aim SIGKILL at the warm parent and SIGUSR1 and SCHED_IDLE, nice 19, one CPU at a bystander with
    no capabilities (as another learner is): seccomp refuses them even where Landlock has no signal scoping."""
    monkeypatch.setenv("GRADER_LANDLOCK_ABI_CAP", cap)
    calls = encode_calls([Call("softmax", {"z": np.array([1.0, 2.0])})])
    with Bystander() as bystander, WarmParent.start() as warm_parent:
        before = bystander.scheduling()
        for name in ("signal_without_kill", "reschedule_others"):
            source = (HOSTILE / f"{name}.py").read_text().replace("__SUPERVISOR_PID__", str(bystander.pid))
            process = LearnerProcess(
                warm_parent, {"attack.py": source.encode()}, "attack.py", ["softmax"], Limits(), layers
            )
            try:
                started = process.start()
                assert started.status == "ok", started
                held_abi = started.layers.get("landlock_abi", 0)
                assert held_abi == (0 if not layers.landlock else 5 if cap else abi_version())
                [outcome] = process.call_many(calls)
            finally:
                process.close()
            assert outcome.status == "raised" and outcome.error is not None, (name, outcome)
            assert outcome.error["type"] == "PermissionError", (name, outcome.error)
        honest = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_bytes()
        process = LearnerProcess(warm_parent, {"mine.py": honest}, "mine.py", ["softmax"], Limits(), layers)
        try:  # the warm parent survived and still serves learners
            assert process.start().status == "ok"
            assert [o.status for o in process.call_many(calls)] == ["ok"]
        finally:
            process.close()
        after = bystander.scheduling()
        noted, status = bystander.close()
    assert after == before
    assert (noted, status) == ([], 0)


# -- wording: one place for what the sandbox did -------------------------------


def test_reasons_name_the_limit_and_wall_clock_or_cpu() -> None:
    assert reasons.timeout_detail(2, 1.9) == "no answer within 2 s (wall-clock limit), busy computing all along"
    assert reasons.timeout_detail(2, 0.01).endswith("waiting rather than computing (sleeping or blocked)")
    assert reasons.timeout_detail(2, None, "while importing your file").endswith("limit) while importing your file")
    sigxcpu = {"signal": 24, "signal_name": "SIGXCPU", "cpu": 20.0}
    assert (
        reasons.crash_detail(sigxcpu, cpu_seconds=20, file_bytes=1 << 20)
        == "stopped after 20 s of CPU time (limit 20 s)"
    )
    assert reasons.hit_cpu_limit(sigxcpu, 20)
    ignored = {"signal": 9, "signal_name": "SIGKILL", "cpu": 21.0}
    assert "limit 21 s, after ignoring the warning signal SIGXCPU" in reasons.crash_detail(
        ignored, cpu_seconds=20, file_bytes=1 << 20
    )
    oom = {"signal": 9, "signal_name": "SIGKILL", "cpu": 0.2}
    assert not reasons.hit_cpu_limit(oom, 20) and "SIGKILL" in reasons.crash_detail(oom, cpu_seconds=20, file_bytes=1)
    segv = {"signal": 11, "signal_name": "SIGSEGV"}
    assert reasons.crash_detail(segv, cpu_seconds=20, file_bytes=1).startswith("crashed (SIGSEGV")
    assert (
        reasons.crash_detail({"exit": 0}, cpu_seconds=20, file_bytes=1)
        == "exited with status 0 before returning a value"
    )
    assert reasons.output_limit_detail(1 << 20) == "printed more than 1 MiB; stopped"
    assert reasons.size_text(512 << 20) == "512 MiB" and reasons.size_text(1 << 30) == "1 GiB"


@pytest.mark.parametrize(
    "kind, phrase",
    [
        ("process", "tried to start a process (not allowed)"),
        ("network", "network access is not allowed"),
        ("file", "file access denied"),
        ("signal", "tried to signal another process"),
        ("limits", "raise its own resource limits"),
        ("import", "not available here"),
    ],
)
def test_describe_error_says_what_the_sandbox_refused(kind: str, phrase: str) -> None:
    error = {"type": "PermissionError", "message": "[Errno 1] Operation not permitted", "frames": [], "kind": kind}
    text = reasons.describe_error(CallOutcome(status="raised", error=error), "softmax")
    assert text.startswith("softmax ") and phrase in text and "PermissionError" in text


def test_describe_error_memory_names_the_limit() -> None:
    error = {"type": "MemoryError", "message": "", "frames": [], "kind": "memory", "limit": 512 << 20}
    assert "ran out of memory (limit 512 MiB)" in reasons.describe_error(CallOutcome("raised", error=error), "softmax")


def test_child_classifies_refusals_from_the_last_sensitive_action() -> None:
    assert learner_errors.classify_refusal(PermissionError(1, "Operation not permitted"), "process") == "process"
    assert learner_errors.classify_refusal(ValueError("not allowed to raise maximum limit"), "process") == "limits"
    assert learner_errors.classify_refusal(MemoryError(), "process") == "memory"
    assert learner_errors.classify_refusal(ValueError("bad"), "process") is None
    assert learner_errors.classify_refusal(PermissionError(13, "Permission denied"), None) == "forbidden"


def test_learner_text_is_escaped_and_unknown_kinds_dropped() -> None:
    error = clean_error(
        {
            "type": "\x1b[2JPASS",
            "message": "line\nnext\r\x1b]52;c;x\x07 \u202eevil",
            "kind": "root",
            "errno": "1",
            "frames": [{"file": "a.py", "line": 3, "function": "f\x00", "text": "x\ny"}],
        }
    )
    assert error["type"] == "\\x1b[2JPASS"
    assert "\n" not in error["message"] and "\x1b" not in error["message"] and "\\u202e" in error["message"]
    assert "kind" not in error and "errno" not in error
    assert error["frames"][0]["function"] == "f\\x00" and error["frames"][0]["text"] == "x y"


def test_trusted_source_travels_only_with_calls_that_need_it() -> None:
    assert not hasattr(child, "TRUSTED_SOURCE")
    assert not needs_trusted([{"fn": "softmax", "args": [{"t": "array", "i": 0}]}])
    assert needs_trusted([{"fn": "numerical_jacobian", "args": [{"t": "callable", "name": "softmax"}]}])


# -- test-only limits ----------------------------------------------------------


def test_limits_read_hidden_test_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_CALL_SECONDS", "0.5")
    monkeypatch.setenv("GRADER_IMPORT_SECONDS", "1.5")
    monkeypatch.setenv("GRADER_CPU_SECONDS", "3")
    limits = Limits()
    assert (limits.call_seconds, limits.import_seconds, limits.cpu_seconds) == (0.5, 1.5, 3.0)
    assert Limits.call_seconds_for(2.0) == 0.5
    monkeypatch.setenv("GRADER_CALL_SECONDS", "nonsense")
    assert Limits().call_seconds == 2.0 and Limits.call_seconds_for(4.0) == 4.0
    monkeypatch.setenv("GRADER_CALL_SECONDS", "-1")
    assert Limits().call_seconds == 2.0


# -- answers files parsed in the grader's own process ----------------------------


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("laughs.yaml", (HOSTILE / "billion_laughs.answers.yaml").read_text(), "YAML aliases"),
        ("deep.yaml", "why-softmax-quiz: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested more than 64 levels"),
        (
            "deep-map.yaml",
            "why-softmax-quiz: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n",
            "nested more than 64 levels",
        ),
        ("deep.json", '{"why-softmax-quiz": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested more than 64 levels"),
    ],
    ids=["billion-laughs", "deep-yaml", "deep-yaml-mapping", "deep-json"],
)
def test_answers_bombs_are_refused_at_once(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    started = time.monotonic()
    with pytest.raises(AnswersProblem, match=message):
        load_answers(path)
    assert time.monotonic() - started < 2


def test_billion_laughs_file_is_small() -> None:
    assert (HOSTILE / "billion_laughs.answers.yaml").stat().st_size < 500


def test_answers_file_of_50_mb_is_refused_after_reading_32_kib(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    with open(path, "w") as handle:
        handle.write("why-softmax-quiz:\n  divide-by-sum-fails: A\n# " + "x" * (50 << 20) + "\n")
    started = time.monotonic()
    with pytest.raises(AnswersProblem, match="larger than 32 KiB"):
        load_answers(path)
    assert time.monotonic() - started < 2


@pytest.mark.slow
def test_json_result_carries_learner_output_only_as_a_string(tmp_path: Path) -> None:
    learner = tmp_path / "mine.py"
    learner.write_text((HOSTILE / "fake_results_output.py").read_text())
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", str(learner), "--exercise", "stable-softmax", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)  # exactly one document: json.loads refuses trailing data
    assert report["score"] == 0
    assert '"score": 100' in report["exercises"][0]["output"] and "\x1b" not in done.stdout


def test_scratch_of_a_killed_grader_is_swept_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.sandbox.warm_parent import sweep_stale_scratch

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (tmp_path / f"grader-{gone}-abc").mkdir()
    (tmp_path / f"grader-{os.getpid()}-mine").mkdir()
    (tmp_path / "grader-oldstyle").mkdir()
    assert sweep_stale_scratch() == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"grader-{os.getpid()}-mine", "grader-oldstyle"]


def test_a_self_test_result_compares_by_value_and_owns_its_defaults() -> None:
    a = selftest.SelfTest(probes={"fork": "denied"}, expected={"fork": True})
    b = selftest.SelfTest(probes={"fork": "denied"}, expected={"fork": True})
    assert a == b and a != selftest.SelfTest(probes={"fork": "denied"}, expected={"fork": True}, error="no")
    a.layers["seccomp"] = True
    assert b.layers == {} and a != b  # each result has its own layers
    assert "probes={'fork': 'denied'}" in repr(a)
