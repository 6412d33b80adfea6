"""What learner code raised, described for the grader: type, message, its own frames, and the refusal.

Runs in the learner process. An audit hook (installed after confinement,
before the submission is imported) remembers the last sensitive action, so a
``PermissionError`` can be told apart as a refused file, process, signal or
network action; the grader's ``reasons`` turn the kind into a sentence. A
learner can fool this only into a different wording of its own failure.
``FloatEvents`` records NumPy's floating-point errors during a call that
returned, as facts for ``no-float-warnings``.
"""

from __future__ import annotations

import contextlib
import errno
import linecache
import os
import sys
import warnings
from typing import Any

import numpy as np

__all__ = ["FloatEvents", "classify_refusal", "describe_exception", "forget_last_action", "watch_actions"]

_MESSAGE_LIMIT = 500
_FRAMES_LIMIT = 20  # of an exception's frames, the grader shows no more; their text stays well within a header

_ACTION_KINDS = {
    "os.fork": "process",
    "os.forkpty": "process",
    "os.posix_spawn": "process",
    "os.exec": "process",
    "os.spawn": "process",
    "os.system": "process",
    "subprocess.Popen": "process",
    "pty.spawn": "process",
    "os.kill": "signal",
    "os.killpg": "signal",
    "signal.pthread_kill": "signal",
    "resource.setrlimit": "limits",
    "resource.prlimit": "limits",
    "open": "file",
    "os.listdir": "file",
    "os.scandir": "file",
    "os.remove": "file",
    "os.rename": "file",
    "os.rmdir": "file",
    "os.mkdir": "file",
    "os.chmod": "file",
    "os.chown": "file",
    "os.truncate": "file",
    "os.link": "file",
    "os.symlink": "file",
    "os.utime": "file",
    "shutil.rmtree": "file",
    "shutil.copyfile": "file",
    "shutil.move": "file",
    "os.chdir": "file",
    "os.setxattr": "file",
    "os.removexattr": "file",
    "glob.glob": "file",
}
_last_action: list[str | None] = [None]


def watch_actions() -> None:
    """Remember the kind of each sensitive action the learner's code takes, through an audit hook."""
    kinds, last = _ACTION_KINDS, _last_action

    def hook(event: str, args: Any) -> None:
        if event in kinds:
            last[0] = kinds[event]
        elif event.startswith("socket."):
            last[0] = "network"

    try:
        sys.addaudithook(hook)
    except Exception:  # pragma: no cover - the wording gets vaguer, nothing else changes
        pass


def classify_refusal(exc: BaseException, last: str | None) -> str | None:
    """The kind of forbidden action ``exc`` reports, if it is a refusal of the sandbox or a limit.

    ``last``: the kind of the last sensitive action the learner's code took
    (what the audit hook saw), which names a refusal the exception alone does not.
    """
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, ValueError) and (last == "limits" or str(exc) == "not allowed to raise maximum limit"):
        return "limits"  # resource.setrlimit reports EPERM as this ValueError
    if isinstance(exc, ModuleNotFoundError):
        # A module missing from this machine and one the sandbox hides are the same to the learner:
        # the grade must not depend on what else happens to be installed beside the grader.
        return "import"
    if not (isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES)):
        return None
    files = []
    tb = exc.__traceback__
    while tb is not None:  # file names only: no source line is read
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    if any(name.startswith("<frozen importlib") for name in files):
        return "import"
    spawners = ("/multiprocessing/", "/subprocess.py", "/concurrent/futures/process.py")
    if any(part in name for name in files for part in spawners):
        return "process"
    if any(name.endswith("/socket.py") for name in files):
        return "network"
    return last or "forbidden"


def forget_last_action() -> None:
    """Start a new import with no remembered action, so an earlier exercise's cannot word this one's refusal."""
    _last_action[0] = None


def describe_exception(exc: BaseException, scratch: str) -> dict[str, Any]:
    """The exception's type, message and the learner's own frames, nothing of ours."""
    try:
        kind = classify_refusal(exc, _last_action[0])  # read first: the traceback opens files
    except BaseException:
        kind = None
    try:
        message = str(exc)
    except BaseException:
        message = "<the exception could not be turned into text>"
    described: dict[str, Any] = {
        "type": "MemoryError" if isinstance(exc, MemoryError) else type(exc).__name__[:100],
        "message": message[:_MESSAGE_LIMIT],
        "frames": [],
    }
    if kind:
        described["kind"] = kind
    if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
        described["module"] = exc.name[:_MESSAGE_LIMIT]
    if isinstance(exc, OSError) and type(exc.errno) is int:
        described["errno"] = exc.errno
    if isinstance(exc, SyntaxError):
        described["file"] = os.path.basename(exc.filename or "")
        described["line"] = exc.lineno
        described["text"] = (exc.text or "").strip()[:200]
        described["message"] = str(exc.msg)[:_MESSAGE_LIMIT]
    if isinstance(exc, SystemExit):
        described["message"] = repr(exc.code)[:_MESSAGE_LIMIT]
    try:
        described["frames"] = _learner_frames(exc.__traceback__, scratch)
    except BaseException:
        pass
    return described


def _learner_frames(tb: Any, scratch: str) -> list[dict[str, Any]]:
    """The traceback's frames in the learner's own files, oldest first, each with its line of code (the first 20).

    Walked by hand: ``traceback.extract_tb`` would also read the source of
    every numpy frame and work out each frame's columns, about a millisecond
    per exception in a fresh process, for frames that are then dropped.
    """
    frames: list[dict[str, Any]] = []
    while tb is not None and len(frames) < _FRAMES_LIMIT:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if filename and filename.startswith(scratch):
            frames.append(
                {
                    "file": os.path.relpath(filename, scratch)[:200],
                    "line": tb.tb_lineno,
                    "function": code.co_name[:100],
                    "text": linecache.getline(filename, tb.tb_lineno).strip()[:200],
                }
            )
        tb = tb.tb_next
    return frames


_FLOAT_KINDS = {"overflow": "overflow", "invalid value": "invalid", "divide by zero": "divide"}
_EVENT_KEYS = ("kind", "in", "file", "line", "text")


class FloatEvents:
    """NumPy's floating-point errors during one call (overflow, invalid, divide by zero), first of each kind.

    Installed as NumPy's error log for the call (``watching``): NumPy writes
    ``Warning: overflow encountered in exp`` to it. Each kind is recorded
    once, with the ufunc named and the innermost frame in the learner's own
    files (file, line, the line's code). Underflow is not recorded: it is
    how small numbers round to zero. Learner code that sets its own error
    handling is its own business: a kind the learner set to anything but
    NumPy's default ("warn") is left as set and not recorded, a learner's own
    error callback or log stays in place, and so does whatever the learner
    sets inside the call; the warning NumPy would have given is still given.
    """

    __slots__ = ("_events", "_scratch")

    def __init__(self, scratch: str) -> None:
        self._scratch = scratch
        self._events: list[dict[str, Any]] = []

    def start(self) -> None:
        """Forget what was recorded: a new call begins."""
        self._events = []

    def take(self) -> list[dict[str, Any]]:
        """What was recorded since ``start``, as plain JSON values.

        Learner code can reach this object (``np.geterrcall()``) and write
        anything into it, so only well-formed events are taken (at most one
        per kind, values of the exact types written), and nothing of the
        learner's runs here.
        """
        taken: list[dict[str, Any]] = []
        events = self._events
        if type(events) is not list:
            return taken
        for event in events[:3]:
            if type(event) is not dict or not all(type(key) is str for key in event):
                continue
            if event.get("kind") not in _FLOAT_KINDS.values() or any(e["kind"] == event["kind"] for e in taken):
                continue
            plain = {key: value for key, value in event.items() if type(value) in (str, int) and key in _EVENT_KEYS}
            taken.append({key: value[:200] if type(value) is str else value for key, value in plain.items()})
        return taken

    def watching(self) -> contextlib.AbstractContextManager[Any]:
        """A context in which NumPy logs this call's overflow, invalid and divide errors here, where still default."""
        modes = np.geterr()
        if "call" in modes.values() or "log" in modes.values():  # the learner's own callback or log: theirs
            return contextlib.nullcontext()
        ours: dict[str, Any] = {kind: "log" for kind in ("over", "invalid", "divide") if modes[kind] == "warn"}
        return np.errstate(call=self, **ours) if ours else contextlib.nullcontext()

    def write(self, message: str) -> None:
        """What NumPy calls for each error in "log" mode: warn as NumPy's "warn" mode would, then record.

        The learner's warning filters see the very warning they would have
        seen (``simplefilter("error")`` makes it an exception in their code,
        and then nothing is recorded: the learner handled it as an error).
        """
        text = str(message).strip().removeprefix("Warning: ")
        warnings.warn(text, RuntimeWarning, stacklevel=2)
        try:
            head, _, ufunc = text.partition(" encountered in ")
            kind = _FLOAT_KINDS.get(head)
            if kind is None or any(event["kind"] == kind for event in self._events):
                return
            event: dict[str, Any] = {"kind": kind, "in": ufunc[:60]}
            event.update(self._learner_frame())
            self._events.append(event)
        except Exception:  # pragma: no cover - recording must never change what the call does
            pass

    def _learner_frame(self) -> dict[str, Any]:
        """The innermost frame running the learner's own code, as file (relative), line and its text."""
        frame = sys._getframe(2)
        prefix = self._scratch + os.sep
        for _ in range(200):
            if frame is None:
                break
            filename = frame.f_code.co_filename
            if filename.startswith(prefix):
                return {
                    "file": os.path.relpath(filename, self._scratch)[:200],
                    "line": frame.f_lineno,
                    "text": linecache.getline(filename, frame.f_lineno).strip()[:200],
                }
            frame = frame.f_back  # type: ignore[assignment]
        return {}
