"""Client of the sandbox's warm parent, importable without numpy.

``grader grade`` starts the warm parent before it imports click, numpy
or the specs, so the parent's interpreter start and numpy import run on
the other core while the grader loads: this module therefore imports only
the standard library.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.sandbox.environment import learner_environment
from grader.sandbox.reading import local_reader
from grader.sandbox.scratch import SCRATCH_PREFIX, ScratchFolders

__all__ = ["SCRATCH_PREFIX", "WarmParent", "default_self_test", "start_early", "sweep_stale_scratch"]


_ROOT = str(Path(__file__).resolve().parents[2])
_MAX_PRELOADS = 256
_SERVER = str(Path(__file__).resolve().with_name("warm_parent_server.py"))


def _minimal_environment() -> dict[str, str]:
    # Machine quirks numpy needs to run correctly, and the test-only switch playing an older Landlock.
    return learner_environment("/usr/bin:/bin", ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GRADER_LANDLOCK_ABI_CAP"))


def _site_dirs() -> list[str]:
    """The global site-packages folders, where an isolated (``-I``) interpreter's own site setup would look."""
    import site

    try:
        return [str(path) for path in site.getsitepackages()]
    except AttributeError:  # pragma: no cover - a virtualenv without it: the warm parent runs site itself
        return []


def default_self_test() -> dict[str, Any] | None:
    """The confinement a default grading session gives its start-up self-test, or ``None`` if unsure.

    That is ``limits.Limits().child_limits()`` and ``limits.Layers()`` (this
    module imports only the standard library, so that it starts first). It is only a guess made to
    start the self-test early: ``front.Sandbox`` takes the early outcome only
    when it equals what it asks for, and runs the self-test itself otherwise.
    Environments that change the layers or the CPU limit get no early test.
    """
    if os.environ.get("GRADER_SANDBOX_LAYERS", "all").strip().lower() not in ("", "all"):
        return None
    if os.environ.get("GRADER_CPU_SECONDS"):
        return None
    return {
        "limits": {"cpu_seconds": 20.0, "memory_bytes": 512 << 20, "file_bytes": 1 << 20, "open_files": 64},
        "layers": {"caps": True, "landlock": True, "seccomp": True},
    }


def _harden_grader() -> None:
    """Make the grading process non-dumpable before any learner process exists.

    Its ``/proc/<pid>/environ``, ``mem`` and ``fd/`` then belong to root and
    need CAP_SYS_PTRACE, which no learner process has: even where Landlock is
    missing, a learner cannot read the grader's environment (CI secrets),
    memory (hidden checks, answer keys) or write to its standard output.
    """
    try:
        from grader.sandbox.confine.privileges import set_non_dumpable

        set_non_dumpable()
    except Exception:  # pragma: no cover - not Linux; the self-test then reports what is weaker
        pass


def sweep_stale_scratch() -> int:
    """Remove scratch folders left by grading processes that no longer exist (killed mid-grading).

    A grader that is SIGKILLed cannot clean up after itself; the next one does.
    Only folders named ``grader-<pid>-...``, owned by this user, whose pid is
    gone, are removed. Returns how many.
    """
    removed = 0
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    for name in names:
        pid_text = name[len(SCRATCH_PREFIX) :].split("-", 1)[0] if name.startswith(SCRATCH_PREFIX) else ""
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        path = os.path.join(root, name)
        try:
            if os.lstat(path).st_uid != os.geteuid() or not os.path.isdir(path) or os.path.islink(path):
                continue
            os.kill(int(pid_text), 0)
            continue  # its grading process is alive (or the pid was reused): leave it
        except ProcessLookupError:
            pass
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed


_EARLY: list[WarmParent] = []
_NOT_WAITED_FOR: list[subprocess.Popen[bytes]] = []  # warm parents closed with wait=False, until seen gone


def _reap_not_waited_for() -> None:
    """Collect the exit status of warm parents closed without waiting that have ended since; never blocks."""
    _NOT_WAITED_FOR[:] = [process for process in _NOT_WAITED_FOR if process.poll() is None]


atexit.register(_reap_not_waited_for)


def waiting_early() -> list[WarmParent]:
    """The warm parents started by :func:`start_early` and not yet taken (at most one)."""
    return list(_EARLY)


def start_early() -> None:
    """Start the warm parent for a command that will need it, before that command has even loaded click.

    The next :meth:`WarmParent.start` takes it. A cold ``grader grade`` waits for
    its warm parent (interpreter, numpy, self-test) once the specs are loaded,
    so every millisecond it starts sooner is one the command ends sooner.
    If nothing takes it, it ends with this process (its control socket
    closes, and it dies with its parent).
    """
    if not _EARLY:
        _EARLY.append(WarmParent(default_self_test()))


class WarmParent:
    """Client of the warm parent that forks learner processes.

    Start it as early as possible (``WarmParent.start()`` returns at once): its
    interpreter and numpy import run while the grader loads its specs.
    One client serves one thread at a time.
    """

    def __init__(self, self_test: dict[str, Any] | None = None) -> None:
        _reap_not_waited_for()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        stderr = tempfile.TemporaryFile()
        # -S: no site processing (its .pth files would slow the warm parent's start); it is told where
        # site-packages are instead, and processes them itself only if numpy cannot be found there.
        argv = [sys.executable, "-I", "-S", "-B", "-u", _SERVER, _ROOT, str(theirs.fileno()), json.dumps(_site_dirs())]
        if self_test is not None:  # the warm parent runs it as soon as it is ready, while we import
            argv.append(json.dumps({**self_test, "grader_pid": os.getpid(), "temp_dir": tempfile.gettempdir()}))
        process = subprocess.Popen(
            argv,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=_minimal_environment(),
            cwd="/",
            start_new_session=True,
        )
        theirs.close()
        self._attach(ours, stderr, process, self_test)
        # Done while the warm parent boots: it forks no learner process before this one asks it to.
        _harden_grader()
        sweep_stale_scratch()

    def _attach(
        self, control: socket.socket, stderr: Any, process: subprocess.Popen[bytes] | None, early: dict[str, Any] | None
    ) -> None:
        """The client's state: its end of the control socket, the file the warm parent's errors go to,
        the warm parent's process (``None`` for a clone, which its own parent reaps) and the early self-test
        asked for."""
        self._socket, self._stderr, self._process, self._early = control, stderr, process, early
        self.pid: int | None = process.pid if process is not None else None  # a clone's: set by clone()
        self._lock = threading.Lock()
        self._facts: dict[str, Any] | None = None
        self._refused: set[str] = set()
        self._owed: list[Callable[[], None]] = []  # what waits on replies to finish_later, in order
        self._to_preload: dict[str, bytes] = {}
        self.preloaded: set[str] = set()
        self.scratch = ScratchFolders()  # folders handed out again to this warm parent's learner processes
        self.self_tests: dict[Any, Any] = {}  # the start-up self-tests it passed, by layers (``front.Sandbox``)

    @classmethod
    def start(cls) -> WarmParent:
        """Start the warm parent without waiting for it to be ready; it runs the default self-test early.

        A warm parent started by :meth:`start_early` in this process, not yet
        taken, is handed over instead of starting a second one.
        """
        if _EARLY:
            return _EARLY.pop()
        return cls(default_self_test())

    def early_self_test(self, confinement: dict[str, Any]) -> dict[str, Any] | None:
        """The early self-test's outcome (``selftest.Bait.outcome``) if it ran with ``confinement``, else ``None``.

        ``confinement`` is ``{"limits": ..., "layers": ...}`` as the grader would
        confine its own self-test. The outcome is handed over once; ``None``
        also when the early test failed to run (the grader then runs it itself).
        """
        if self._early is None or self._early != confinement:
            return None
        self._early = None
        with self._lock:
            self._wait_ready()
            self._socket.send(json.dumps({"op": "selftest"}).encode())
            outcome = self._reply("selftest", timeout=60)
        return None if "error" in outcome else outcome

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The warm parent's process, when this client started it; a clone's belongs to its own parent."""
        return self._process

    @property
    def facts(self) -> dict[str, Any]:
        """What the machine offers: ``landlock_abi``, ``seccomp``, ``root``, ``subreaper``."""
        with self._lock:
            self._wait_ready()
            assert self._facts is not None
            return dict(self._facts)

    def clone(self) -> WarmParent:
        """A second warm parent, forked from this one, with a client of its own (for another grading process).

        A fork costs milliseconds where a new warm parent costs an interpreter
        start and a numpy import. The clone is the same program in the same
        state, so the start-up self-test this parent passed (``self_tests``,
        kept by ``front.Sandbox``) holds for it too and is not run again;
        if the clone reports other facts about the machine, it is run again.
        This parent kills the clone and its learner processes when it stops.
        """
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:
                self._wait_ready()
                socket.send_fds(self._socket, [json.dumps({"op": "clone"}).encode()], [theirs.fileno()])
                pid = self._reply("cloned").get("pid")
        finally:
            theirs.close()
        twin = WarmParent.__new__(WarmParent)
        twin._attach(ours, self._stderr, None, None)
        twin.pid = pid if type(pid) is int else None
        try:
            same = twin.facts == self.facts
        except BaseException:  # the clone did not start: nothing of it is kept
            twin.abandon()
            raise
        if same:
            twin.self_tests = dict(self.self_tests)
        return twin

    def abandon(self) -> None:
        """Close this process's end of the control socket and nothing else (in a forked process that inherited it)."""
        self._socket.close()

    def note_request(self, key: str, message: bytes) -> None:
        """Preload a ``call_many`` request (``message``, known by ``key``) before the next learner process is forked.

        The grader asks once a request has gone out in full to a second
        learner process: the session is grading many learners on one plan.
        Processes forked afterwards hold it decoded and get just the key
        (``arguments.preload``).
        """
        if key in self.preloaded or key in self._to_preload or key in self._refused:
            return
        if len(self.preloaded) + len(self._to_preload) < _MAX_PRELOADS:
            self._to_preload[key] = message

    def _preload_noted(self) -> None:
        """Preload what ``note_request`` picked (under the lock), before the next fork."""
        while self._to_preload:
            key, message = self._to_preload.popitem()
            try:
                memfd = os.memfd_create("grader-request", os.MFD_CLOEXEC)
            except (AttributeError, OSError):  # no memfd here: requests keep going in full
                self._refused.add(key)
                continue
            try:
                view = memoryview(message)
                while view:
                    view = view[os.write(memfd, view) :]
                request = {"op": "preload", "key": key, "size": len(message)}
                socket.send_fds(self._socket, [json.dumps(request).encode()], [memfd])
            finally:
                os.close(memfd)
            if self._reply("preloaded").get("ok") is True:
                self.preloaded.add(key)
            else:  # too big, or refused: never asked again
                self._refused.add(key)

    def spawn(self, config: dict[str, Any], fds: list[int]) -> int:
        """Fork a learner process that will use ``fds`` (request, response, output)."""
        with self._lock:
            self._wait_ready()
            self._preload_noted()
            socket.send_fds(self._socket, [json.dumps({"op": "spawn", "config": config}).encode()], fds)
            return int(self._reply("spawned")["pid"])

    def finish(self, pid: int, grace: float = 0.0) -> dict[str, Any]:
        """End a learner process (after ``grace`` seconds to exit by itself); say how it ended."""
        with self._lock:
            self._socket.send(json.dumps({"op": "finish", "pid": pid, "grace": grace}).encode())
            return self._reply("finished")

    def finish_later(self, pid: int, then: Callable[[], None]) -> None:
        """Ask the warm parent to end a learner process, without waiting for it to be gone.

        For a process whose answers are all in (the submission is graded):
        the grader moves on while the warm parent kills and reaps it, which
        it does before serving any later request. ``then`` runs once that is
        done (its reply is read before the next request's) or at :meth:`close`.
        """
        with self._lock:
            self._socket.send(json.dumps({"op": "finish", "pid": pid, "grace": 0.0}).encode())
            self._owed.append(then)

    def _settle(self) -> None:
        """Read the replies to earlier ``finish_later`` requests (they come first), running what waited on them."""
        while self._owed:
            then = self._owed.pop(0)
            self._read_reply("finished", 30)
            then()

    def close(self, *, wait: bool = True) -> None:
        """Stop the warm parent; it kills any learner process still alive.

        ``wait=False``: do not wait for it to be gone (it ends by itself once its
        socket closes, and with this process), for a command about to exit.
        """
        try:
            if wait:
                with self._lock:
                    self._settle()
        except Exception:  # noqa: BLE001 - a warm parent that is gone has ended its learners with it
            pass
        try:
            for then in self._owed:  # not waited for: the learners end with the warm parent
                then()
            self._owed.clear()
            self.scratch.close()
            self._socket.close()
        finally:
            if self._process is not None and not wait:
                self._stderr.close()
                _NOT_WAITED_FOR.append(self._process)
            elif self._process is not None:  # a clone ends when its socket closes, and its own parent reaps it
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
                self._stderr.close()

    def __enter__(self) -> WarmParent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_ready(self) -> None:
        if self._facts is None:
            self._facts = self._reply("hello", timeout=60)

    def _reply(self, op: str, timeout: float = 30) -> dict[str, Any]:
        self._settle()
        return self._read_reply(op, timeout)

    def _read_reply(self, op: str, timeout: float) -> dict[str, Any]:
        self._socket.settimeout(timeout)
        try:
            data = local_reader().recv(self._socket)
        except (TimeoutError, OSError) as exc:
            from grader.errors import SandboxError

            raise SandboxError(f"the sandbox's warm parent did not answer ({exc}); {self._diagnostics()}") from None
        from grader.errors import SandboxError

        if not data:
            raise SandboxError(f"the sandbox's warm parent stopped; {self._diagnostics()}")
        message = json.loads(data)
        if message.get("op") != op:
            raise SandboxError(f"the sandbox's warm parent answered {message!r} where {op!r} was expected")
        return message

    def _diagnostics(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return f"its last words: {tail}" if tail else "it printed nothing"
