"""The hostile corpus: every ``tests/hostile/*.py`` attacks the grader, and the grader must hold.

Each file is a tiny learner file that defines ``softmax(z, axis=-1)`` (the
attacked exercise, ``stable-softmax``) and does something hostile, after the
study in ``research/sandbox.md`` section 8 (its docstring names the item).
A learner is a folder: ``attack.py`` (the attack, with a correct
``log_softmax`` appended when the ``log-softmax`` exercise exists, so a
correct exercise sits in the same file) and a correct ``answers.yaml`` for
``why-softmax-quiz``. Grading runs through the real CLI as a subprocess
(``grader grade DIR --exercise ... --format json``), under a small
supervisor that is a child subreaper: whatever the grading leaves behind is
re-parented to it and counted.

For every attack:

1. ``stable-softmax`` scores 0 and its reasons say what happened;
2. the quiz and the same-file ``log-softmax`` are graded exactly as without
   the attack (``log-softmax`` excepted when the attack happens at import);
3. the run ends in time, with exit status 1 (never 2 or 3);
4. no file outside the learner's scratch changed: a canary folder, the
   course's specs and solutions (a private copy the run grades from), the
   learner's own files; no file named after the run's marker appeared in
   the home folder, site-packages, the grader's ``__pycache__`` or /tmp;
5. no process was left behind (the supervisor saw nothing re-parented, and
   no process carries the run's marker);
6. no hidden text reached the output: the specs carry a canary comment,
   the grader's environment a secret, the other learner's files a canary,
   and the quiz options the learner did not pick their reasons;
7. the loopback listeners saw nothing and the supervisor got no signal.

The batch variants grade the attackers beside a correct learner (``honest``)
in one ``grader batch`` and require the honest result to be unchanged. The
weaker tiers (``GRADER_SANDBOX_LAYERS=seccomp`` and ``none``, with
``--allow-weak-sandbox``) must say what they do not protect, and the
architecture-level protections (forged scores, lying objects, forged
frames) must still hold with no kernel layer at all.

Attacks that wait for a time limit run with shorter limits through the
test-only variables ``GRADER_CALL_SECONDS``, ``GRADER_IMPORT_SECONDS`` and
``GRADER_CPU_SECONDS``. Every test that grades starts learner processes and is
marked ``slow``; only the corpus check runs in the fast lane. Nothing runs in parallel.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import site
import socket
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = Path(__file__).resolve().parent / "hostile"
GRADER_PACKAGE = ROOT / "grader"

QUIZ, ATTACKED, SECOND = "why-softmax-quiz", "stable-softmax", "log-softmax"
PAIR_ASSIGNMENT = "hostile-pair"
CORRECT_LOG_SOFTMAX = """

def log_softmax(z, axis=-1):
    import numpy
    z = numpy.asarray(z, dtype=float)
    shifted = z - numpy.max(z, axis=axis, keepdims=True)
    return shifted - numpy.log(numpy.sum(numpy.exp(shifted), axis=axis, keepdims=True))
"""


@dataclass(frozen=True)
class Attack:
    """What an attack must produce: phrases its reasons must contain (a tuple: any one of them)."""

    expect: tuple[Any, ...]
    at_import: bool = False  # the file cannot even be imported, so its second exercise fails too
    slow: bool = False
    env: tuple[tuple[str, str], ...] = ()
    tier_b: str = "holds"  # "holds": every invariant at tier B too; "leaks": reads are not confined there
    tier_c: bool = False  # an architecture-level attack: must hold with no kernel layer at all


WALL = (("GRADER_CALL_SECONDS", "1.5"), ("GRADER_IMPORT_SECONDS", "3"))
CPU = (("GRADER_CPU_SECONDS", "1"), ("GRADER_CALL_SECONDS", "15"))
DENIED_FILE = "file access denied"
NO_PROCESS = "tried to start a process (not allowed)"
NOT_NUMBERS = "not an array of numbers"
WRONG = "Expected"

ATTACKS: dict[str, Attack] = {
    "exit_at_import": Attack(
        ("stopped Python while it was being imported (SystemExit 0)",), at_import=True, tier_c=True
    ),
    "os_exit_in_call": Attack(("exited with status 0 before returning a value",), tier_c=True),
    "raise_systemexit": Attack(("raised SystemExit",), tier_c=True),
    "raise_keyboardinterrupt": Attack(("raised KeyboardInterrupt",), tier_c=True),
    "busy_loop_at_import": Attack(
        ("wall-clock limit", "while importing your file"), at_import=True, slow=True, env=WALL
    ),
    "busy_loop_in_call": Attack(
        ("no answer within 1.5 s (wall-clock limit), busy computing all along",), slow=True, env=WALL
    ),
    "cpu_limit": Attack(("stopped after 1 s of CPU time (limit 1 s)",), slow=True, env=CPU),
    "sleep_forever": Attack(
        ("no answer within 1.5 s (wall-clock limit), waiting rather than computing",), slow=True, env=WALL
    ),
    "ignore_sigxcpu": Attack(
        ("of CPU time (limit 2 s, after ignoring the warning signal SIGXCPU)",), slow=True, env=CPU
    ),
    "memory_bomb": Attack(("ran out of memory (limit ",), tier_c=True),
    "bytearray_bomb": Attack((("ran out of memory (limit ", "wall-clock limit"),)),
    "fork_loop": Attack((NO_PROCESS,)),
    "raw_fork_syscall": Attack((("tried an operation the sandbox does not allow", NO_PROCESS),)),
    "subprocess_shell": Attack((NO_PROCESS,)),
    "os_popen": Attack((NO_PROCESS,)),
    "multiprocessing_pool": Attack((NO_PROCESS,)),
    "setsid_daemon": Attack((NO_PROCESS,)),
    "endless_thread": Attack((NOT_NUMBERS,), tier_c=True),
    "print_flood": Attack(("printed more than 1 MiB; stopped",), tier_c=True),
    "fake_results_output": Attack(("raised ValueError",), tier_c=True),
    "escape_in_exception": Attack(("12 passed, 0 failed",), tier_c=True),
    "write_results": Attack((DENIED_FILE,)),
    "read_hidden": Attack((DENIED_FILE,), tier_b="leaks"),
    "read_other_learner": Attack((DENIED_FILE,), tier_b="leaks"),
    "rmtree_and_home": Attack((DENIED_FILE,)),
    "plant_startup_files": Attack((DENIED_FILE,)),
    "network": Attack(("network access is not allowed",)),
    "abstract_socket": Attack(("network access is not allowed",)),
    "monkeypatch_numpy": Attack((WRONG,), tier_c=True),
    "lying_object": Attack((NOT_NUMBERS,), tier_c=True),
    "lying_ndarray_subclass": Attack((WRONG,), tier_c=True),
    "forged_frames": Attack(("returned an unreadable or non-numeric value",), tier_c=True),
    "signal_grader": Attack(("tried to signal another process (not allowed)",)),
    "signal_without_kill": Attack((("tried an operation the sandbox does not allow", "tried to signal another"),)),
    "reschedule_others": Attack(("tried an operation the sandbox does not allow",)),
    "proc_mem_ptrace": Attack((DENIED_FILE,), tier_b="leaks"),
    "segfault": Attack(("crashed (SIGSEGV",), tier_c=True),
    "deep_recursion": Attack((("crashed (SIGSEGV", "ran out of memory", "wall-clock limit", "RecursionError"),)),
    "import_scipy": Attack(("tried to import a module that is not available here",), at_import=True, tier_b="leaks"),
    "import_missing_module": Attack(
        ("tried to import a module that is not available here: softmax_answers_from_the_internet",),
        at_import=True,
        tier_c=True,
    ),
    "import_grader": Attack(("tried to import a module that is not available here",), at_import=True, tier_b="leaks"),
    "steal_trusted_softmax": Attack(((DENIED_FILE, "tried to import"),), tier_b="leaks"),
    "gc_stack_walk": Attack((NOT_NUMBERS,), tier_c=True),
    "wrong_shape_nan": Attack((WRONG, "shape"), tier_c=True),
    "lookup_table": Attack((NOT_NUMBERS,), tier_c=True),
    "deep_nesting_source": Attack(("SyntaxError", "too many nested parentheses"), at_import=True, tier_c=True),
    "disk_fill": Attack((DENIED_FILE,)),
    "environment_tampering": Attack((NOT_NUMBERS,), tier_c=True),
    "root_privileges": Attack(("tried to raise its own resource limits (not allowed)",)),
    "huge_return": Attack(("returned more than 1 MiB in one answer (limit 1 MiB)",), tier_c=True),
    "answers_at_the_limit": Attack(
        ("returned more than 4 MiB in the answers of one exercise (limit 4 MiB)",), tier_c=True
    ),
    "huge_length_headers": Attack(("returned more than 1 MiB in one answer (limit 1 MiB)",), tier_c=True),
}
ANSWER_ATTACKS = {  # attacks on the quiz through the answers file; attack.py is a correct softmax
    "billion_laughs": "YAML aliases (*name) are not allowed",
    "answers_50_mb": "larger than 32 KiB",
    "answers_nested_yaml": "nested more than 64 levels deep",  # 20 KB of brackets: under the size limit
    "answers_nested_json": "nested more than 64 levels deep",
}
QUICK = sorted(name for name, attack in ATTACKS.items() if not attack.slow)
SLOW = sorted(name for name, attack in ATTACKS.items() if attack.slow)


def test_corpus_lists_every_file_and_covers_the_study() -> None:
    files = {path.stem for path in HOSTILE.glob("*.py")}
    assert files == set(ATTACKS)
    items = set()
    for path in HOSTILE.glob("*.py"):
        items.update(int(n) for n in re.findall(r"#(\d+)", path.read_text().split('"""')[1]))
    items |= {36, 37}  # the answers-file attacks, generated by ANSWER_ATTACKS
    assert len(items) >= 25, sorted(items)


# -- the course, the honest learner, the markers --------------------------


@dataclass
class Course:
    root: Path  # a private copy of the specs and solutions, with canary comments
    exercises: list[str]  # what each attacker is graded on: the quiz, the attacked exercise, maybe a second one
    second: bool  # whether the same-file second exercise (log-softmax) is graded
    honest: Path  # a correct learner folder beside the attackers
    token: str
    markers: list[str] = field(default_factory=list)  # text that must never appear in any output
    baseline: dict[str, Any] = field(default_factory=dict)  # exercise id -> result without an attack

    @property
    def exercises_dir(self) -> Path:
        return self.root / "exercises"


def _copy_course(target: Path, token: str, second: bool) -> list[str]:
    """Copy the specs and solutions this corpus grades with; give every spec a canary comment."""
    ids = [QUIZ, ATTACKED] + ([SECOND] if second else [])
    (target / "exercises").mkdir(parents=True)
    markers = []
    for exercise in ids:
        text = (ROOT / "exercises" / f"{exercise}.yaml").read_text()
        marker = f"hidden-canary-{exercise}-{token}"
        (target / "exercises" / f"{exercise}.yaml").write_text(text + f"\n# {marker}\n")
        markers.append(marker)
        spec = yaml.safe_load(text)
        for relative in [spec.get("reference_solution")] + [w["path"] for w in spec.get("known_wrong", [])]:
            if relative:
                destination = target / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(ROOT / relative, destination)
    (target / "exercises" / f"{PAIR_ASSIGNMENT}.yaml").write_text(
        f"id: {PAIR_ASSIGNMENT}\nkind: assignment\ntitle: A hostile learner beside an honest one\n"
        f"exercises: [{', '.join(ids)}]\n"
    )
    answers = (ROOT / "solutions" / "why-softmax-answers.yaml").read_text()
    (target / "solutions" / "why-softmax-answers.yaml").write_text(answers + f"# answer-key-canary-{token}\n")
    markers.append(f"answer-key-canary-{token}")
    return markers


def _quiz_markers() -> list[str]:
    """The reasons of the options a correct learner does not pick: shown only to those who pick them."""
    spec = yaml.safe_load((ROOT / "exercises" / f"{QUIZ}.yaml").read_text())
    found = []
    for question in spec["questions"]:
        for option in question["options"]:
            if not option.get("correct"):
                found.append(" ".join(option["reason"].split())[:60])
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Course:
    token = uuid.uuid4().hex[:12]
    base = tmp_path_factory.mktemp("hostile")
    second = (ROOT / "exercises" / f"{SECOND}.yaml").is_file()
    markers = _copy_course(base / "course", token, second)
    honest = base / "class" / "honest"
    honest.mkdir(parents=True)
    (honest / "mine.py").write_text(
        (ROOT / "solutions" / "stable-softmax" / "reference.py").read_text()
        + CORRECT_LOG_SOFTMAX
        + f"\n# other-learner-canary-{token}\n"
    )
    (honest / "answers.yaml").write_text(
        (ROOT / "solutions" / "why-softmax-answers.yaml").read_text() + f"# other-learner-canary-{token}\n"
    )
    markers += [f"other-learner-canary-{token}", f"grader-secret-{token}"]
    markers += [
        "known_wrong:",
        "must_fail:",
        "reference_solution:",
        "correct: true",
        "peak = np.where(np.isfinite(peak), peak, 0.0)",
    ] + _quiz_markers()
    found = Course(
        root=base / "course",
        exercises=[QUIZ, ATTACKED] + ([SECOND] if second else []),
        second=second,
        honest=honest,
        token=token,
        markers=markers,
    )
    # The baseline: the same folder layout with a harmless (wrong) softmax. If the second exercise's
    # reference does not pass here, it is left out rather than making every test fail.
    folder = base / "baseline"
    _learner_folder(folder, "def softmax(z, axis=-1):\n    return 'not written yet'\n", found)
    run = _grade(found, folder, env={})
    report = json.loads(run.stdout)
    found.baseline = {e["id"]: e for e in report["exercises"]}
    assert found.baseline[QUIZ]["status"] == "passed", found.baseline[QUIZ]
    if second and found.baseline[SECOND]["status"] != "passed":
        found.second = False
        found.exercises.remove(SECOND)
    return found


def _learner_folder(folder: Path, source: str, course: Course, answers: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "attack.py").write_text(source + (CORRECT_LOG_SOFTMAX if course.second else ""))
    (folder / "answers.yaml").write_text(
        answers if answers is not None else (ROOT / "solutions" / "why-softmax-answers.yaml").read_text()
    )
    return folder


# -- running the grader under a subreaper -----------------------------------

SUPERVISOR = r"""
import ctypes, json, os, signal, subprocess, sys, tempfile, time
spec = json.loads(sys.argv[1])
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what the grading leaves comes to us
signals = []
for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda number, frame: signals.append(signal.Signals(number).name))
for path, text in spec["render"].items():
    with open(path, "w") as handle:
        handle.write(text.replace("__SUPERVISOR_PID__", str(os.getpid())))
out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # files, not pipes: nothing can hold them open
start = time.monotonic()
proc = subprocess.Popen(spec["cmd"], cwd=spec["cwd"], env=spec["env"], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
timed_out = False
while True:
    try:
        proc.wait(timeout=spec["timeout"] - (time.monotonic() - start))
        break
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()
        proc.wait()
        break
    except InterruptedError:
        continue
elapsed = time.monotonic() - start
def children():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError):
                continue
            if int(fields[1]) == os.getpid() and fields[0] not in (b"Z", b"X"):
                found.append((int(entry), cmdline))
    return found
deadline = time.monotonic() + 5  # the warm parent may take a moment to die after the grader
survivors = children()
while survivors and time.monotonic() < deadline:
    time.sleep(0.05)
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
    survivors = children()
for pid, _ in survivors:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
out.seek(0); err.seek(0)
print(json.dumps({"rc": proc.returncode, "elapsed": elapsed, "timed_out": timed_out, "signals": signals,
                  "survivors": survivors, "stdout": out.read().decode(errors="replace"),
                  "stderr": err.read().decode(errors="replace")}))
"""


@dataclass
class Run:
    rc: int
    elapsed: float
    timed_out: bool
    signals: list[str]
    survivors: list[Any]
    stdout: str
    stderr: str


class Listeners:
    """A loopback TCP listener and UDP socket the attacks try to reach; they must hear nothing."""

    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)

    def heard(self) -> list[str]:
        found = []
        try:
            conn, _ = self.tcp.accept()
            found.append("tcp")
            conn.close()
        except BlockingIOError:
            pass
        try:
            found.append("udp " + repr(self.udp.recv(256)))
        except BlockingIOError:
            pass
        return found

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


@pytest.fixture(scope="module")
def listeners() -> Any:
    found = Listeners()
    yield found
    found.close()


def _tokens(course: Course, canary: Path, marker: str, listeners: Listeners | None) -> dict[str, str]:
    return {
        "__COURSE__": str(course.root),
        "__CANARY_DIR__": str(canary),
        "__CANARY_FILE__": str(canary / "canary.txt"),
        "__OTHER_LEARNER__": str(course.honest),
        "__GRADER__": str(GRADER_PACKAGE),
        "__MARKER__": marker,
        "__TCP_PORT__": str(listeners.tcp.getsockname()[1] if listeners else 9),
        "__UDP_PORT__": str(listeners.udp.getsockname()[1] if listeners else 9),
    }


def _render(source: str, tokens: dict[str, str]) -> str:
    for token, value in tokens.items():
        source = source.replace(token, value)
    return source


def _environment(course: Course, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_")}
    env["GRADER_TEST_SECRET"] = f"grader-secret-{course.token}"  # must never be readable by a learner
    env.update(extra)
    return env


def _supervise(cmd: list[str], env: dict[str, str], cwd: Path, render: dict[str, str], timeout: float) -> Run:
    spec = {"cmd": cmd, "env": env, "cwd": str(cwd), "render": render, "timeout": timeout}
    done = subprocess.run(
        [sys.executable, "-c", SUPERVISOR, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=timeout + 60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return Run(**json.loads(done.stdout))


def _grade(
    course: Course,
    folder: Path,
    env: dict[str, str],
    render: dict[str, str] | None = None,
    extra: list[str] = (),
    fmt: str = "json",
    timeout: float = 150,
) -> Run:
    cmd = [sys.executable, "-m", "grader.cli", "--exercises", str(course.exercises_dir), "grade", str(folder)]
    for exercise in course.exercises:
        cmd += ["--exercise", exercise]
    cmd += ["--format", fmt, *extra]
    return _supervise(cmd, _environment(course, env), course.root, render or {}, timeout)


def _batch(
    course: Course,
    directory: Path,
    out: Path,
    env: dict[str, str],
    render: dict[str, str],
    extra: list[str] = (),
    timeout: float = 900,
) -> Run:
    cmd = [
        sys.executable,
        "-m",
        "grader.cli",
        "--exercises",
        str(course.exercises_dir),
        "batch",
        str(directory),
        "--assignment",
        PAIR_ASSIGNMENT,
        "--out",
        str(out),
        "--jobs",
        "1",
        "--force",
        *extra,
    ]
    return _supervise(cmd, _environment(course, env), course.root, render, timeout)


# -- what must not change ----------------------------------------------------


def _snapshot(*folders: Path) -> dict[str, str]:
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                found[str(path)] = "dir"
    return found


def _make_canary(folder: Path) -> Path:
    (folder / "inner").mkdir(parents=True)
    (folder / "canary.txt").write_text("the canary must survive every attack\n")
    (folder / "inner" / "nested.txt").write_text("so must its folder\n")
    return folder


def _planted(marker: str, *folders: Path) -> list[str]:
    """Files named after the run's marker in the places attacks write to."""
    places = [Path.home(), Path("/tmp"), GRADER_PACKAGE / "sandbox" / "__pycache__", *folders]
    places += [Path(p) for p in site.getsitepackages() + [site.getusersitepackages()]]
    found = []
    for place in places:
        try:
            found += [str(p) for p in place.iterdir() if marker in p.name]
        except OSError:
            continue
    return found


def _scratch_left(marker: str) -> list[str]:
    """Learner scratch folders of this run still on disk (each holds a copy of the learner's file)."""
    found = []
    for folder in Path(tempfile.gettempdir()).glob("grader-*"):
        try:
            found += [str(p) for p in folder.iterdir() if p.suffix == ".py" and marker in p.read_text(errors="replace")]
        except OSError:
            continue
    return found


def _marked_processes(marker: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            text = Path("/proc", entry, "cmdline").read_bytes() + b" " + Path("/proc", entry, "comm").read_bytes()
            state = Path("/proc", entry, "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker[:15].encode() in text and state not in (b"Z", b"X"):  # a zombie is dead, only not yet reaped
            found.append(f"{entry}: {text!r}")
    return found


def _leaks(course: Course, text: str) -> list[str]:
    return [marker for marker in course.markers if marker in text]


def _text_of(exercise: dict[str, Any]) -> str:
    parts = [exercise["reason"]] + [c["reason"] + " " + (c.get("got") or "") for c in exercise["checks"]]
    return " ".join(parts)


def _says(text: str, expect: tuple[Any, ...]) -> bool:
    return all(any(p in text for p in (item if isinstance(item, tuple) else (item,))) for item in expect)


def _scrub(exercise: dict[str, Any]) -> dict[str, Any]:
    """A result as the attack may not change it: what the code printed and where it defines the entry aside."""
    return {k: v for k, v in exercise.items() if k not in ("output", "file", "line")}


def _check_report(
    course: Course, name: str, report: dict[str, Any], expect: tuple[Any, ...], at_import: bool, tier: str = "A"
) -> None:
    results = {e["id"]: e for e in report["exercises"]}
    attacked = results[ATTACKED]
    assert attacked["score"] == 0, (name, attacked)
    assert attacked["status"] in ("failed", "error"), (name, attacked)
    assert _says(_text_of(attacked), expect), (name, expect, _text_of(attacked)[:1500])
    assert results[QUIZ] == course.baseline[QUIZ], name
    if course.second:
        if at_import:
            assert results[SECOND]["score"] == 0, name
        else:
            assert _scrub(results[SECOND]) == _scrub(course.baseline[SECOND]), (name, results[SECOND])
    assert report["sandbox"]["tier"] == tier, report["sandbox"]


# -- tier A: one learner, through `grader grade --format json` ---------------


def _attack_run(
    course: Course,
    listeners: Listeners,
    tmp_path: Path,
    name: str,
    *,
    env: dict[str, str],
    extra: list[str] = (),
    fmt: str = "json",
) -> tuple[Run, dict[str, Any]]:
    """Grade one attacker; check every invariant that does not depend on the result."""
    attack = ATTACKS[name]
    marker = f"hx{uuid.uuid4().hex[:10]}"
    canary = _make_canary(tmp_path / "canary")
    folder = tmp_path / "learner"
    source = (HOSTILE / f"{name}.py").read_text()
    tokens = _tokens(course, canary, marker, listeners)
    _learner_folder(folder, "", course)
    render = {
        str(folder / "attack.py"): _render(source, tokens)
        + (CORRECT_LOG_SOFTMAX if course.second else "")
        + f"\n# run {marker}\n"
    }
    before = _snapshot(canary, course.root, course.honest)
    listeners.heard()
    answers_before = (folder / "answers.yaml").read_bytes()
    run = _grade(course, folder, env={**dict(attack.env), **env}, render=render, extra=extra, fmt=fmt)
    assert not run.timed_out, (name, run.stderr[-2000:])
    assert run.rc == 1, (name, run.rc, run.stderr[-3000:])
    assert run.elapsed < 120, (name, run.elapsed)
    assert run.survivors == [], (name, run.survivors)
    assert _marked_processes(marker) == [], name
    assert run.signals == [], (name, run.signals)
    assert listeners.heard() == [], name
    assert _snapshot(canary, course.root, course.honest) == before, name
    assert (folder / "answers.yaml").read_bytes() == answers_before
    assert sorted(p.name for p in folder.iterdir()) == ["answers.yaml", "attack.py"], name
    assert _planted(marker, course.root, canary) == [], name
    assert _scratch_left(marker) == [], name
    return run, json.loads(run.stdout) if fmt == "json" else {}


@pytest.mark.slow
@pytest.mark.parametrize("name", QUICK)
def test_attack_scores_zero_and_harms_nothing(course: Course, listeners: Listeners, tmp_path: Path, name: str) -> None:
    run, report = _attack_run(course, listeners, tmp_path, name, env={})
    _check_report(course, name, report, ATTACKS[name].expect, ATTACKS[name].at_import)
    assert _leaks(course, run.stdout + run.stderr) == [], name
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout, name


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_attack_waiting_for_a_limit_scores_zero_in_time(
    course: Course, listeners: Listeners, tmp_path: Path, name: str
) -> None:
    run, report = _attack_run(course, listeners, tmp_path, name, env={})
    _check_report(course, name, report, ATTACKS[name].expect, ATTACKS[name].at_import)
    assert _leaks(course, run.stdout + run.stderr) == [], name
    assert run.elapsed < 60, (name, run.elapsed)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ANSWER_ATTACKS))
def test_hostile_answers_file_is_refused_quickly(course: Course, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "learner"
    reference = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_text()
    _learner_folder(folder, reference, course, answers="")
    (folder / "answers.yaml").unlink()
    if name == "billion_laughs":
        (folder / "answers.yaml").write_text((HOSTILE / "billion_laughs.answers.yaml").read_text())
    elif name == "answers_50_mb":
        with open(folder / "answers.yaml", "w") as handle:
            handle.write(f"{QUIZ}:\n  divide-by-sum-fails: A\n# " + "x" * (50 << 20) + "\n")
    elif name == "answers_nested_yaml":
        (folder / "answers.yaml").write_text(f"{QUIZ}: " + "[" * 10_000 + "]" * 10_000 + "\n")
    else:
        (folder / "answers.json").write_text(f'{{"{QUIZ}": ' + "[" * 10_000 + "]" * 10_000 + "}")
    run = _grade(course, folder, env={}, timeout=120)
    assert run.rc == 1 and not run.timed_out, run.stderr[-2000:]
    assert run.elapsed < 60 and run.survivors == []
    report = json.loads(run.stdout)
    results = {e["id"]: e for e in report["exercises"]}
    assert results[QUIZ]["score"] == 0 and results[QUIZ]["status"] == "error"
    assert ANSWER_ATTACKS[name] in results[QUIZ]["reason"], results[QUIZ]["reason"]
    assert results[ATTACKED]["status"] == "passed"  # the other exercise is graded as ever


@pytest.mark.slow
def test_fake_output_cannot_pass_for_the_graders_own(course: Course, listeners: Listeners, tmp_path: Path) -> None:
    run, _ = _attack_run(course, listeners, tmp_path, "fake_results_output", env={}, fmt="text")
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout and "\u202e" not in run.stdout
    lines = run.stdout.splitlines()
    printed = [line for line in lines if "12 passed" in line or '"exercises": [' in line or "PASS all checks" in line]
    assert printed and all(line.startswith("    learner| ") for line in printed), printed
    checks = {c["id"] for e in course.baseline.values() for c in e["checks"]}
    labels = ("PASS", "FAIL", "ERROR", "TIMEOUT", "SKIP")
    for line in lines:  # the grader's own positions hold only the grader's own lines
        if line and not line.startswith(" "):
            assert line.startswith(("Total: ", "note: ", "warning: ")) or line.split("  ")[0] in course.exercises, line
        elif line.startswith("  ") and not line.startswith("   ") and line[2:].split(" ")[0] in labels:
            assert line[2:].split(" ")[1].rstrip(":") in checks, line
    assert len([line for line in lines if line.startswith("Total: ")]) == 1


@pytest.mark.slow
def test_planted_startup_files_do_not_change_the_next_run(course: Course, listeners: Listeners, tmp_path: Path) -> None:
    _attack_run(course, listeners, tmp_path / "first", "plant_startup_files", env={})
    folder = tmp_path / "again"
    _learner_folder(folder, "def softmax(z, axis=-1):\n    return 'not written yet'\n", course)
    report = json.loads(_grade(course, folder, env={}).stdout)
    assert {e["id"]: _scrub(e) for e in report["exercises"]} == {k: _scrub(v) for k, v in course.baseline.items()}


# -- batches: attackers beside an honest learner -------------------------------


def _class_folder(
    course: Course, tmp_path: Path, names: list[str], listeners: Listeners | None, marker: str, canary: Path
) -> tuple[Path, dict[str, str]]:
    directory = tmp_path / "class"
    shutil.copytree(course.honest, directory / "honest")
    tokens = _tokens(course, canary, marker, listeners)
    tokens["__OTHER_LEARNER__"] = str(directory / "honest")
    render = {}
    for name in names:
        folder = _learner_folder(directory / name, "", course)
        render[str(folder / "attack.py")] = _render((HOSTILE / f"{name}.py").read_text(), tokens) + (
            CORRECT_LOG_SOFTMAX if course.second else ""
        )
    return directory, render


@pytest.fixture(scope="module")
def honest_in_batch(course: Course, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("honest-batch")
    directory = base / "class"
    shutil.copytree(course.honest, directory / "honest")
    run = _batch(course, directory, base / "out", env={}, render={})
    assert run.rc == 0, run.stderr[-2000:]
    report = json.loads((base / "out" / "results" / "honest.json").read_text())
    assert all(e["status"] == "passed" for e in report["exercises"]), report
    return report


def _check_batch(
    course: Course,
    honest_in_batch: dict[str, Any],
    tmp_path: Path,
    names: list[str],
    *,
    env: dict[str, str],
    extra: list[str] = (),
    listeners: Listeners | None = None,
    tier: str = "A",
) -> dict[str, dict[str, Any]]:
    marker = f"hx{uuid.uuid4().hex[:10]}"
    canary = _make_canary(tmp_path / "canary")
    directory, render = _class_folder(course, tmp_path, names, listeners, marker, canary)
    out = tmp_path / "out"
    before = _snapshot(canary, course.root)
    if listeners:
        listeners.heard()
    run = _batch(course, directory, out, env=env, render=render, extra=list(extra))
    assert run.rc == 0 and not run.timed_out, run.stderr[-3000:]
    assert run.survivors == [] and _marked_processes(marker) == [], run.survivors
    assert run.signals == []
    if listeners:
        assert listeners.heard() == []
    assert _snapshot(canary, course.root) == before
    assert _planted(marker, course.root, canary, directory) == []
    honest = json.loads((out / "results" / "honest.json").read_text())
    assert honest["exercises"] == honest_in_batch["exercises"]
    assert honest["sandbox"]["tier"] == tier
    reports = {name: json.loads((out / "results" / f"{name}.json").read_text()) for name in names}
    for name, report in reports.items():
        assert report["sandbox"]["tier"] == tier, name
    return reports


def _out_texts(out: Path, names: list[str]) -> str:
    return "\n".join(
        p.read_text(errors="replace")
        for p in out.rglob("*")
        if p.is_file() and not p.name.startswith(".") and (p.stem in names or p.parent == out)
    )


@pytest.mark.slow
def test_batch_attackers_beside_an_honest_learner(
    course: Course, listeners: Listeners, honest_in_batch: dict[str, Any], tmp_path: Path
) -> None:
    reports = _check_batch(course, honest_in_batch, tmp_path, QUICK, env={}, listeners=listeners)
    for name, report in reports.items():
        _check_report(course, name, report, ATTACKS[name].expect, ATTACKS[name].at_import)
    assert _leaks(course, _out_texts(tmp_path / "out", QUICK + ["honest"])) == []


@pytest.mark.slow
def test_batch_slow_attackers_beside_an_honest_learner(
    course: Course, listeners: Listeners, honest_in_batch: dict[str, Any], tmp_path: Path
) -> None:
    env = {"GRADER_CALL_SECONDS": "1.5", "GRADER_IMPORT_SECONDS": "3"}
    names = [name for name in SLOW if ATTACKS[name].env == WALL]
    reports = _check_batch(course, honest_in_batch, tmp_path, names, env=env, listeners=listeners)
    for name, report in reports.items():
        _check_report(course, name, report, ATTACKS[name].expect, ATTACKS[name].at_import)


# -- weaker tiers ----------------------------------------------------------------

TIER_B = {"GRADER_SANDBOX_LAYERS": "seccomp"}
TIER_C = {"GRADER_SANDBOX_LAYERS": "none"}


@pytest.mark.slow
@pytest.mark.parametrize("layers, tier", [("seccomp", "B"), ("none", "C"), ("caps,seccomp", "B")])
def test_weak_tier_refuses_hidden_checks_without_the_flag(
    course: Course, tmp_path: Path, layers: str, tier: str
) -> None:
    folder = _learner_folder(tmp_path / "learner", (ROOT / "solutions/stable-softmax/reference.py").read_text(), course)
    run = _grade(course, folder, env={"GRADER_SANDBOX_LAYERS": layers})
    assert run.rc == 2 and run.stdout == "", (run.rc, run.stdout[:500])
    line = run.stderr.strip()
    assert len(line.splitlines()) == 1 and "--allow-weak-sandbox" in line and f"tier {tier}" in line, line
    assert run.survivors == []


@pytest.mark.slow
def test_weak_tier_refuses_a_batch_before_any_learner_runs(course: Course, tmp_path: Path) -> None:
    directory = tmp_path / "class"
    shutil.copytree(course.honest, directory / "honest")
    run = _batch(course, directory, tmp_path / "out", env=TIER_B, render={}, timeout=120)
    assert run.rc == 2, (run.rc, run.stderr[-1000:])
    assert len(run.stderr.strip().splitlines()) == 1 and "--allow-weak-sandbox" in run.stderr
    assert not (tmp_path / "out" / "results" / "honest.json").exists()
    assert run.survivors == []


@pytest.mark.slow
def test_weak_tier_still_grades_public_checks_and_quizzes(course: Course, tmp_path: Path) -> None:
    folder = _learner_folder(tmp_path / "learner", (ROOT / "solutions/stable-softmax/reference.py").read_text(), course)
    public = _grade(course, folder, env=TIER_B, extra=["--public"])
    assert public.rc == 0, public.stderr
    report = json.loads(public.stdout)
    assert report["sandbox"]["tier"] == "B" and "file reads are not confined" in report["sandbox"]["warning"]
    (folder / "attack.py").unlink()
    quiz_only = _supervise(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "--exercises",
            str(course.exercises_dir),
            "grade",
            str(folder / "answers.yaml"),
            "--format",
            "json",
        ],
        _environment(course, TIER_B),
        course.root,
        {},
        120,
    )
    assert quiz_only.rc == 0, quiz_only.stderr
    assert json.loads(quiz_only.stdout)["sandbox"]["tier"] == "B"


@pytest.mark.slow
def test_tier_b_says_what_it_does_not_protect_and_holds_the_rest(
    course: Course, listeners: Listeners, honest_in_batch: dict[str, Any], tmp_path: Path
) -> None:
    reports = _check_batch(
        course,
        honest_in_batch,
        tmp_path,
        QUICK,
        env=TIER_B,
        extra=["--allow-weak-sandbox"],
        listeners=listeners,
        tier="B",
    )
    for name, report in reports.items():
        sandbox = report["sandbox"]
        assert sandbox["seccomp"] is True and sandbox["landlock_abi"] == 0
        assert len(sandbox["unprotected"]) == 1 and sandbox["unprotected"][0].startswith("file reads are not confined")
        assert "file reads are not confined" in sandbox["warning"] and "--allow-weak-sandbox" in sandbox["warning"]
        assert sandbox["self_test"]["read"] == "allowed" and sandbox["self_test"]["fork"] == "denied"
        if ATTACKS[name].tier_b == "holds":
            _check_report(course, name, report, (), ATTACKS[name].at_import, tier="B")
    holding = [name for name in QUICK if ATTACKS[name].tier_b == "holds"]
    assert _leaks(course, _out_texts(tmp_path / "out", holding + ["honest"])) == []


@pytest.mark.slow
def test_tier_c_says_what_it_does_not_protect_and_the_architecture_holds(
    course: Course, honest_in_batch: dict[str, Any], tmp_path: Path
) -> None:
    names = sorted(name for name, attack in ATTACKS.items() if attack.tier_c) + ["setsid_daemon"]
    reports = _check_batch(
        course, honest_in_batch, tmp_path, names, env=TIER_C, extra=["--allow-weak-sandbox"], tier="C"
    )
    for name, report in reports.items():
        sandbox = report["sandbox"]
        assert sandbox["seccomp"] is False and sandbox["landlock_abi"] == 0
        said = " ".join(sandbox["unprotected"])
        for gap in ("file reads", "file writes", "starting processes", "network", "signal"):
            assert gap in said, (gap, said)
        if name == "setsid_daemon":  # forked for real here: the subreaper must still kill the daemon
            assert report["exercises"][[e["id"] for e in report["exercises"]].index(ATTACKED)]["score"] == 0
            continue
        _check_report(course, name, report, ATTACKS[name].expect, ATTACKS[name].at_import, tier="C")
    assert _leaks(course, _out_texts(tmp_path / "out", names + ["honest"])) == []
