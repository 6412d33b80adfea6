"""The grader's disk cache: plain JSON data kept between runs, never code.

Entries are derived data a cold ``grader grade`` would otherwise work out
again: validated specs (``spec.loader``), the rows of ``grader list``
(``spec.listing``), instructor solutions' answers and held outputs
(``engine.disk_cache``), interval bounds (``checks.statistics``). Each is
keyed by what it depends on (a spec file's bytes and a fingerprint of the
code that defines the records, :func:`spec_key`), so any edit misses.

An entry is JSON, read with ``json.loads`` and nothing else: no pickle, no
marshal, no name that is imported or called. Every read goes through the
caller's ``check``, which rebuilds the value from the data and refuses what
does not have the expected types and shapes; a refused or unreadable entry
is discarded with a one-line note on stderr and worked out again, never a
crash. The folder is private (0700, owned by the current user); a folder or
file that is not ours, that anyone else could write, or that is a symbolic
link, is ignored. A learner process confined by the kernel layers cannot
write here (its file writes are limited to its scratch folder).

Where the kernel has no layers, the fallback runner confines nothing and the
learner's code could write anything this user may; its grader processes
then keep their cache in the ``unconfined`` folder inside the usual one,
which a confined run never reads. ``GRADER_NO_CACHE=1`` turns the cache
off; ``GRADER_CACHE_DIR`` moves it.

It sits beside ``spec`` and ``checks`` rather than in either, since both
store things in it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from grader.record import Record

__all__ = ["UNCONFINED", "directory", "enabled", "load", "origin", "remember", "spec_key", "store"]

_PACKAGE = Path(__file__).resolve().parent
# The folder, inside the usual one, of the grader processes of a machine without kernel layers.
UNCONFINED = "unconfined"
# Far past any entry the grader writes; a larger file is not read into memory.
_MAX_BYTES = 64 * 1024 * 1024
_SUFFIX = ".json"

T = TypeVar("T")


def directory() -> Path | None:
    """The cache folder of this process, or ``None`` when the cache is off (``GRADER_NO_CACHE``)."""
    if os.environ.get("GRADER_NO_CACHE"):
        return None
    chosen = os.environ.get("GRADER_CACHE_DIR")
    if chosen:
        base = Path(chosen)
    else:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = Path(home) / "grader"
    return base / UNCONFINED if _unconfined(os.environ.get("GRADER_PRETEND_NO_KERNEL_LAYERS", "")) else base


@functools.lru_cache(maxsize=4)  # keyed by the test switch; the machine itself does not change
def _unconfined(switch: str) -> bool:
    """Whether this machine has no kernel layers, so that only the fallback runner starts learner processes."""
    from grader.sandbox.kernel_layers import kernel_layers_missing

    return kernel_layers_missing() is not None


def enabled() -> bool:
    """Whether the cache is in use (``GRADER_NO_CACHE`` is not set)."""
    return directory() is not None


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> bytes:
    """Hash of the modules whose classes a cached spec is made of, and of the records they build on."""
    from grader import __version__

    digest = hashlib.sha256(__version__.encode())
    for folder in ("record", "spec", "checks"):
        for path in sorted((_PACKAGE / folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def spec_key(raw: bytes) -> str:
    """The cache key of a spec file's bytes."""
    return hashlib.sha256(_code_fingerprint() + raw).hexdigest()


def remember(spec: Record, key: str) -> None:
    """Note on ``spec`` (a loaded spec record) that it was read from a file whose cache key is ``key``.

    The record carries the key itself (:attr:`Record.source_key`), so it lives
    exactly as long as the spec and no copy of the spec inherits it.
    """
    spec.note_source_key(key)


def origin(spec: Any) -> str | None:
    """The cache key of the file ``spec`` was loaded from; ``None`` when built otherwise, or a copy."""
    return spec.source_key if isinstance(spec, Record) else None


def load(key: str, check: Callable[[Any], T], *, kind: str = "spec") -> T | None:
    """``check(data)`` of the entry's JSON data; ``None`` when absent, unsafe, unreadable or refused.

    ``check`` rebuilds the value and raises ``ValueError`` (or ``TypeError``,
    ``KeyError``, ``OverflowError``) for data that is not what it expects; that entry is then
    discarded with a note on stderr, so the caller works the value out again.
    """
    folder = directory()
    if folder is None:
        return None
    path = folder / f"{kind}-{key}{_SUFFIX}"
    text = _read_private(folder, path)
    if text is None:
        return None
    try:
        return check(json.loads(text))
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError, RecursionError) as problem:
        _discard(path, problem)
        return None


def _read_private(folder: Path, path: Path) -> bytes | None:
    """The file's bytes when it and its folder are ours alone and neither is a link; else ``None``."""
    try:
        if not _private(os.stat(folder, follow_symlinks=False), stat.S_ISDIR):
            _not_private(str(folder))
            return None
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if not _private(info, stat.S_ISREG) or info.st_size > _MAX_BYTES:
            return None
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read(_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(handle)


def _private(info: os.stat_result, kind: Callable[[int], bool]) -> bool:
    return kind(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


@functools.lru_cache(maxsize=4)  # said once a process: the folder stays unused until its owner fixes it
def _not_private(folder: str) -> None:
    print(
        "grader: note: the cache folder is not used: it is a link, not the user's own, or others may write it "
        "(make it the user's own with mode 0700 to use it again)",
        file=sys.stderr,
    )


def _discard(path: Path, problem: BaseException) -> None:
    """Drop an entry the grader cannot use, saying so in one line (the file's name, never its folder)."""
    print(f"grader: note: discarded the cache entry {path.name} ({_first_line(problem)})", file=sys.stderr)
    try:
        os.unlink(path)
    except OSError:
        pass


def _first_line(problem: BaseException) -> str:
    text = str(problem).strip().splitlines()
    return (text[0] if text else type(problem).__name__)[:200]


def store(key: str, data: Any, *, kind: str = "spec") -> None:
    """Save ``data`` (plain JSON data) atomically; skipped where the cache cannot be written or data is not JSON."""
    folder = directory()
    if folder is None:
        return
    temporary = None
    try:
        text = json.dumps(data, separators=(",", ":"), check_circular=False).encode()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.stat(folder, follow_symlinks=False), stat.S_ISDIR):
            return  # a folder others may write (or a link) is never read, so nothing is put where they could see it
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{kind}-", suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            stream.write(text)
        os.replace(temporary, folder / f"{kind}-{key}{_SUFFIX}")
    except (OSError, TypeError, ValueError, RecursionError):
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
