"""The start-up self-test: prove, before any learner runs, that the sandbox holds here.

Landlock and seccomp wrappers can "degrade gracefully" without a word, so
the grader does not take the kernel's version numbers on trust. Once per
grading process, a learner process confined exactly like the real ones (but
running only the trusted :func:`probe`, no learner code) tries what a
hostile submission would:

==============  ============================================================
probe           what the child tries
==============  ============================================================
read            read a canary file the parent created outside the allow-list
list            list the canary's folder
write           create a file beside the canary
proc_environ    read the grader's ``/proc/<pid>/environ`` (CI secrets live there)
connect         open a TCP connection to a loopback listener the parent owns
udp             send a UDP datagram to a loopback socket the parent owns
fork            start a process
signal          signal the grader and its own parent with ``kill`` (signal 0:
                nothing is sent); make the grader the owner of a pipe in
                each way there is (``F_SETOWN``, ``F_SETOWN_EX``,
                ``FIOSETOWN``..., ``O_ASYNC``), and have the kernel signal
                an owner (``F_SETSIG``, ``O_ASYNC``, a write): a thread of
                the bait's
raise_limit     raise its own hard CPU limit
==============  ============================================================

Each probe is ``denied``, ``allowed`` or ``error: ...``. The parent also
checks that its listener saw no connection, its UDP socket no datagram and
its thread no signal: ``signal`` is denied only when every way was refused,
or an owner could be set but the signal did not arrive (Landlock's signal
scoping, ABI >= 6, stops it on delivery; seccomp refuses the owner).
:func:`expected_denials` says which probes must be denied given the layers
asked for and what the machine offers; :class:`SelfTest` holds the outcome,
the tier it proves, and what a weaker tier does not protect.

The child side (:func:`probe`) uses the standard library only: it runs in a
confined learner process, imported by the warm parent before it forks.
"""

from __future__ import annotations

import _thread
import errno
import fcntl
import os
import resource
import shutil
import signal
import socket
import struct
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = [
    "PROBES",
    "Bait",
    "SelfTest",
    "expected_denials",
    "judge",
    "probe",
    "run_self_test",
    "summarise",
]

PROBES = ("read", "list", "write", "proc_environ", "connect", "udp", "fork", "signal", "raise_limit")

_CANARY_TEXT = b"grader self-test canary: a learner process must not be able to read this\n"

# What the signal probe has the kernel send to the bait's thread: the signal it picks with F_SETSIG, or
# SIGIO when F_SETSIG is refused. Both are blocked there while the bait is laid, so one that arrives waits
# to be seen (and is taken) instead of being acted on.
_OWNER_SIGNALS = (signal.SIGURG, signal.SIGIO)
_F_SETSIG, _F_SETOWN_EX, _F_OWNER_TID, _F_OWNER_PID, _F_OWNER_PGRP = 10, 15, 0, 1, 2
_FIOSETOWN, _SIOCSPGRP, _FIOASYNC = 0x8901, 0x8902, 0x5452

# Groups of probes: what each protects, as said to the person running the grader
# (in a result's sandbox block, and shortly in a refusal).
PROTECTS: list[tuple[str, tuple[str, ...], str, str]] = [
    (
        "reads",
        ("read", "list", "proc_environ"),
        "file reads are not confined: learner code can read hidden checks, answer keys, other learners' work "
        "and the grader's files",
        "read hidden checks and answer keys",
    ),
    (
        "writes",
        ("write",),
        "file writes are not blocked: learner code can change or delete the grader user's files",
        "change files",
    ),
    (
        "processes",
        ("fork",),
        "starting processes is not blocked (leftover processes are still killed after each learner)",
        "start processes",
    ),
    ("network", ("connect", "udp"), "the network is open to learner code", "use the network"),
    (
        "signals",
        ("signal",),
        "learner code can signal the grader and other processes of the same user",
        "signal the grader",
    ),
    ("limits", ("raise_limit",), "learner code can raise its own resource limits", "raise its own limits"),
]


# -- child side ----------------------------------------------------------


def serve_probe(config: dict[str, Any], response_fd: int) -> None:
    """The probe process: confine itself as a learner process does, run every probe, report once.

    Needs nothing but the standard library, so the warm parent can fork it
    before it imports numpy (the early self-test then runs alongside that import).
    """
    from grader.sandbox.confine.process import apply_layers
    from grader.sandbox.frames import encode_message

    layers = apply_layers(config)
    report = memoryview(encode_message({"op": "selftest", "layers": layers, "probes": probe(config["selftest"])}))
    while report:
        report = report[os.write(response_fd, report) :]


def probe(spec: dict[str, Any]) -> dict[str, str]:
    """Run every probe in this (confined) process; say what was denied."""
    results: dict[str, str] = {}
    canary = str(spec["canary"])
    folder = os.path.dirname(canary)

    def read() -> None:
        with open(canary, "rb") as handle:
            handle.read()

    def write() -> None:
        with open(os.path.join(folder, "written-by-learner"), "xb") as handle:
            handle.write(b"x")

    def proc_environ() -> None:
        with open(f"/proc/{int(spec['grader_pid'])}/environ", "rb") as handle:
            handle.read()

    def connect() -> None:
        with socket.create_connection(("127.0.0.1", int(spec["tcp_port"])), timeout=2):
            pass

    def udp() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"self-test", ("127.0.0.1", int(spec["udp_port"])))

    def fork() -> None:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked copy leaves at once
            os._exit(0)
        os.waitpid(pid, 0)

    def kill_others() -> None:
        for target in (int(spec["grader_pid"]), os.getppid()):
            os.kill(target, 0)  # signal 0: permission is checked, nothing is delivered

    def raise_limit() -> None:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard == resource.RLIM_INFINITY:
            return
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard + 60))

    def list_folder() -> None:
        os.listdir(folder)

    probes: dict[str, Callable[[], None]] = {
        "read": read,
        "list": list_folder,
        "write": write,
        "proc_environ": proc_environ,
        "connect": connect,
        "udp": udp,
        "fork": fork,
        "signal": kill_others,
        "raise_limit": raise_limit,
    }
    ports = {"connect": spec.get("tcp_port"), "udp": spec.get("udp_port")}
    for name in PROBES:
        if name in ports and not ports[name]:
            results[name] = "skipped"  # the parent has no loopback listener to offer
            continue
        results[name] = _attempt(probes[name])
    if results["signal"] == "denied":
        results["signal"] = signal_through_owner(int(spec["grader_pid"]), spec.get("signal_thread"))
    return results


def signal_through_owner(grader: int, thread: int | None) -> str:
    """Try every way of having the kernel signal the grader with no ``kill``: making it a descriptor's owner, or
    turning ``O_ASYNC`` on (which, on a terminal, makes the terminal's foreground process group the owner).

    ``denied`` when every way was refused; ``allowed`` when one was not but
    no signal could be sent at the bait's ``thread``; ``sent`` when it was:
    whether it arrived is for the bait to say (:meth:`Bait.outcome`).
    """

    def owner_ex(kind: int, target: int) -> Callable[[int], Any]:
        return lambda fd: fcntl.fcntl(fd, _F_SETOWN_EX, struct.pack("ii", kind, target))

    ways: dict[str, Callable[[int], Any]] = {
        "F_SETOWN": lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, grader),
        "F_SETOWN group": lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, -grader),
        "F_SETOWN_EX process": owner_ex(_F_OWNER_PID, grader),
        "F_SETOWN_EX group": owner_ex(_F_OWNER_PGRP, grader),
        "F_SETOWN_EX thread": owner_ex(_F_OWNER_TID, thread or grader),
        "FIOSETOWN": lambda fd: fcntl.ioctl(fd, _FIOSETOWN, struct.pack("i", grader)),
        "SIOCSPGRP": lambda fd: fcntl.ioctl(fd, _SIOCSPGRP, struct.pack("i", grader)),
        "O_ASYNC": lambda fd: fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC),
        "FIOASYNC": lambda fd: fcntl.ioctl(fd, _FIOASYNC, struct.pack("i", 1)),
    }
    taken = []
    for name, way in ways.items():
        read_end, write_end = os.pipe()
        try:  # one way per pipe, and nothing written to it: nothing is sent
            way(read_end)
            taken.append(name)
        except OSError as exc:  # ENOTTY: an ioctl for sockets, which a pipe does not take
            if exc.errno not in (errno.EPERM, errno.EACCES, errno.ENOTTY):
                return f"error: {name}: {errno.errorcode.get(exc.errno or 0, type(exc).__name__)}"
        finally:
            os.close(read_end)
            os.close(write_end)
    if not taken:
        return "denied"
    if not thread or not {"F_SETOWN_EX thread", "O_ASYNC"} <= set(taken):
        return "allowed"  # a way is open, and whether a signal would arrive cannot be seen
    read_end, write_end = os.pipe()
    try:
        ways["F_SETOWN_EX thread"](read_end)
        try:
            fcntl.fcntl(read_end, _F_SETSIG, _OWNER_SIGNALS[0])
        except OSError:
            pass  # then SIGIO is sent, which the bait's thread blocks too
        ways["O_ASYNC"](read_end)
        os.write(write_end, b"x")
    except OSError as exc:
        return f"error: {errno.errorcode.get(exc.errno or 0, type(exc).__name__)}"
    finally:
        os.close(read_end)
        os.close(write_end)
    return "sent"


def _attempt(action: Callable[[], None]) -> str:
    try:
        action()
    except PermissionError:
        return "denied"
    except ValueError:  # resource.setrlimit reports EPERM as ValueError
        return "denied"
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EACCES):
            return "denied"
        return f"error: {errno.errorcode.get(exc.errno or 0, type(exc).__name__)}"
    except Exception as exc:  # noqa: BLE001 - any surprise is reported, not raised
        return f"error: {type(exc).__name__}"
    return "allowed"


# -- parent side ---------------------------------------------------------


def expected_denials(facts: dict[str, Any], layers: Any) -> dict[str, bool]:
    """Which probes must be denied, given the machine's ``facts`` and the ``Layers`` asked for."""
    landlock = int(facts.get("landlock_abi") or 0) if layers.landlock else 0
    seccomp = bool(facts.get("seccomp")) and layers.seccomp
    root = bool(facts.get("root"))
    caps = layers.caps or not root  # a user's process has no capabilities to drop
    return {
        "read": landlock >= 1,
        "list": landlock >= 1,
        "write": landlock >= 1 or seccomp,
        "proc_environ": landlock >= 1 or (caps and bool(facts.get("grader_non_dumpable"))),
        "connect": seccomp or landlock >= 4,
        "udp": seccomp,
        "fork": seccomp,
        "signal": seccomp or landlock >= 6,
        "raise_limit": caps or seccomp,
    }


class SelfTest:
    """What the self-test found: each probe's outcome, what should have been denied, the tier proved.

    A plain class, not a dataclass: the warm parent imports this module
    before numpy, and importing ``dataclasses`` there would slow its start.
    """

    _FIELDS = ("probes", "expected", "layers", "reached", "error")

    def __init__(
        self,
        probes: dict[str, str],
        expected: dict[str, bool],
        layers: dict[str, Any] | None = None,
        reached: tuple[str, ...] = (),
        error: str | None = None,
    ) -> None:
        self.probes, self.expected = probes, expected
        self.layers = {} if layers is None else layers
        self.reached = reached  # "connect" / "udp": the parent's listener got something; "signal": the bait's thread
        self.error = error

    def __eq__(self, other: object) -> bool:
        if type(other) is not SelfTest:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return "SelfTest(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS) + ")"

    def held(self, name: str) -> bool:
        """Whether probe ``name`` was stopped (or could not be tried here)."""
        return self.probes.get(name) in ("denied", "skipped") and name not in self.reached

    @property
    def failures(self) -> list[str]:
        """Probes that a layer asked for should have denied, but did not."""
        return [name for name, must in self.expected.items() if must and not self.held(name)]

    def protected(self, group: str) -> bool:
        names = next(members for key, members, _, _ in PROTECTS if key == group)
        return all(self.held(name) for name in names)

    @property
    def tier(self) -> str:
        """A: everything held. B: all but file reads. C: less than that."""
        others = all(self.protected(group) for group, _, _, _ in PROTECTS if group != "reads")
        if others and self.protected("reads"):
            return "A"
        return "B" if others else "C"

    @property
    def unprotected(self) -> list[str]:
        """What this machine's sandbox does not stop, one sentence per kind of harm."""
        return [text for group, _, text, _ in PROTECTS if not self.protected(group)]

    @property
    def weak(self) -> bool:
        """Whether hidden checks may not be graded here without ``--allow-weak-sandbox``."""
        return self.error is not None or self.tier != "A" or bool(self.failures)

    def refusal(self, machine: dict[str, Any], layers: Any) -> str:
        """The one-line reason to refuse hidden grading, naming the flag that overrides it."""
        flag = "pass --allow-weak-sandbox to grade anyway (every result then carries a warning)"
        if self.error is not None:
            return f"the sandbox self-test could not run ({self.error}); {flag}"
        if self.failures:
            return (
                f"the sandbox self-test failed: a confined learner process was not stopped from "
                f"{', '.join(_DOING[name] for name in self.failures)}, "
                f"although the layers asked for should stop it; "
                f"refusing to grade hidden checks here; {flag}"
            )
        why = []
        if not layers.landlock:
            why.append("Landlock is switched off by GRADER_SANDBOX_LAYERS")
        elif not machine.get("landlock_abi"):
            why.append("this kernel offers no Landlock")
        if not layers.seccomp:
            why.append("seccomp is switched off by GRADER_SANDBOX_LAYERS")
        elif not machine.get("seccomp"):
            why.append("this machine offers no seccomp")
        cause = f" ({' and '.join(why)})" if why else ""
        could = [short for group, _, _, short in PROTECTS if not self.protected(group)]
        return (
            f"the sandbox here is tier {self.tier}{cause}, so learner code could {', '.join(could)}; "
            f"refusing to grade hidden checks: {flag}, or grade with --public"
        )


_DOING = {
    "read": "reading a file outside its allow-list",
    "list": "listing a folder outside its allow-list",
    "write": "writing a file outside its scratch folder",
    "proc_environ": "reading the grader's environment",
    "connect": "connecting to a loopback TCP port",
    "udp": "sending a UDP datagram",
    "fork": "starting a process",
    "signal": "signalling the grader",
    "raise_limit": "raising its own CPU limit",
}


def summarise(test: SelfTest) -> dict[str, str]:
    """The probes' outcomes in a fixed order, for the ``sandbox`` block of every result."""
    return {name: test.probes.get(name, "skipped") for name in PROBES}


def run_self_test(
    open_process: Callable[[dict[str, Any]], dict[str, Any]], facts: dict[str, Any], layers: Any
) -> SelfTest:
    """Create the canary and the listeners, run the probes in a confined child, judge the outcome.

    ``open_process(spec)`` runs a confined self-test process with ``spec`` and
    returns its report (``{"layers": ..., "probes": ...}``); it raises
    ``SandboxError`` when no process could be started.
    """
    bait = Bait(os.getpid())
    try:
        return judge(bait.outcome(open_process(bait.spec)), facts, layers)
    finally:
        bait.close()


class Bait:
    """What the probes aim at: a canary file in a folder of its own, a loopback TCP listener and UDP socket,
    and the thread that lays it, which blocks the signals a descriptor's owner is sent until :meth:`close`.

    Made by the grader (:func:`run_self_test`), or by the warm parent when it
    runs the self-test early (``grader.sandbox.warm_parent_server``) on the grader's behalf:
    then ``grader_pid`` and ``temp_dir`` are the grader's, so the probes aim
    at the grader's environment and its temporary folder, as they would from the grader.
    :meth:`outcome` and :meth:`close` are called in the thread that made it.
    """

    def __init__(self, grader_pid: int, temp_dir: str | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix=f"grader-{grader_pid}-canary-", dir=temp_dir)
        self.canary = os.path.join(self.folder, "canary.txt")
        with open(self.canary, "wb") as handle:
            handle.write(_CANARY_TEXT)
        self.tcp = _listener(socket.SOCK_STREAM)
        self.udp = _listener(socket.SOCK_DGRAM)
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, _OWNER_SIGNALS)
        self.spec = {
            "canary": self.canary,
            "grader_pid": grader_pid,
            "tcp_port": self.tcp.getsockname()[1] if self.tcp else 0,
            "udp_port": self.udp.getsockname()[1] if self.udp else 0,
            "signal_thread": _thread.get_native_id(),
        }

    def outcome(self, report: dict[str, Any]) -> dict[str, Any]:
        """The child's report and what the bait saw: probes, layers, sockets reached or signal received,
        canary intact (JSON-able)."""
        probes = {name: str(report.get("probes", {}).get(name, "error: not reported"))[:80] for name in PROBES}
        reached = _reached(self.tcp, self.udp)
        if _take_owner_signals():
            reached += ("signal",)
        if probes["signal"] == "sent":  # the kernel sent it, on the child's word: did it arrive?
            probes["signal"] = "allowed" if "signal" in reached else "denied"
        with open(self.canary, "rb") as handle:
            intact = handle.read() == _CANARY_TEXT
        return {
            "probes": probes,
            "reached": list(reached),
            "intact": intact,
            "layers": {k: v for k, v in dict(report.get("layers", {})).items() if k != "errors"},
        }

    def close(self) -> None:
        for sock in (self.tcp, self.udp):
            if sock is not None:
                sock.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        _take_owner_signals()
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)


def _take_owner_signals() -> bool:
    """Take every pending signal of the kind the signal probe sends; whether there was one."""
    taken = False
    while signal.sigtimedwait(_OWNER_SIGNALS, 0) is not None:
        taken = True
    return taken


def judge(outcome: dict[str, Any], facts: dict[str, Any], layers: Any) -> SelfTest:
    """The ``SelfTest`` of a :meth:`Bait.outcome`, given the machine's ``facts`` and the ``Layers`` asked for.

    Runs in the grader: whether the grader itself is non-dumpable is checked here.
    """
    facts = dict(facts, grader_non_dumpable=_non_dumpable())
    probes = {name: str(outcome["probes"].get(name, "error: not reported"))[:80] for name in PROBES}
    if not outcome.get("intact", False):
        probes["write"] = "allowed"
    return SelfTest(
        probes=probes,
        expected=expected_denials(facts, layers),
        layers=dict(outcome.get("layers", {})),
        reached=tuple(str(name) for name in outcome.get("reached", ())),
    )


def _listener(kind: int) -> socket.socket | None:
    try:
        sock = socket.socket(socket.AF_INET, kind)
        sock.bind(("127.0.0.1", 0))
        if kind == socket.SOCK_STREAM:
            sock.listen(4)
        sock.setblocking(False)
        return sock
    except OSError:  # no loopback here: the network probes are skipped
        return None


def _reached(tcp: socket.socket | None, udp: socket.socket | None) -> tuple[str, ...]:
    """Which of the parent's loopback sockets got a connection or a datagram."""
    found = []
    for name, sock, take in (("connect", tcp, lambda s: s.accept()[0].close()), ("udp", udp, lambda s: s.recv(64))):
        if sock is None:
            continue
        try:
            take(sock)
            found.append(name)
        except OSError:  # BlockingIOError: nothing came
            continue
    return tuple(found)


def _non_dumpable() -> bool:
    try:
        from grader.sandbox.confine._libc import PR_GET_DUMPABLE, prctl

        return prctl(PR_GET_DUMPABLE) == 0
    except Exception:
        return False
