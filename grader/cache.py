"""The grader's disk cache: validated specs, so a cold ``grader grade`` skips validating them.

Each entry is keyed by the spec file's bytes and a fingerprint of the code
that defines the models, so any edit to either misses the cache. Entries are
the grader's own objects, written by the grader into a private folder
(0700, owned by the current user); a file that is not ours, or that anyone
else could write, is ignored. Nothing a learner process produces is ever
stored here. ``GRADER_NO_CACHE=1`` turns the cache off; ``GRADER_CACHE_DIR``
moves it.

Other derived objects (an exercise's built plan, :mod:`grader.checks.plan_cache`)
are stored here too, each ``kind`` under its own file prefix. ``origin`` tells
which cache key a loaded spec came from, so they can be keyed by it.

It sits beside ``spec`` and ``checks`` rather than in either, since both
store things in it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.record import Record

__all__ = ["enabled", "load", "origin", "remember", "spec_key", "store"]

_PACKAGE = Path(__file__).resolve().parent


def _directory() -> Path | None:
    if os.environ.get("GRADER_NO_CACHE"):
        return None
    chosen = os.environ.get("GRADER_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "grader"


def enabled() -> bool:
    """Whether the cache is in use (``GRADER_NO_CACHE`` is not set)."""
    return _directory() is not None


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


def load(key: str, *, kind: str = "spec", persistent_load: Callable[[Any], Any] | None = None) -> Any | None:
    """The cached object, or ``None`` when absent, unsafe or unreadable.

    ``persistent_load`` resolves the references :func:`store` was given
    ``persistent_id`` for (objects the caller holds, not stored).
    """
    directory = _directory()
    if directory is None:
        return None
    path = directory / f"{kind}-{key}.pickle"
    try:
        info = os.stat(path, follow_symlinks=False)
        folder = os.stat(directory, follow_symlinks=False)
        for item in (info, folder):
            if item.st_uid != os.geteuid() or item.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as handle:
            unpickler = pickle.Unpickler(handle)
            if persistent_load is not None:
                unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
            return unpickler.load()
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError, KeyError):
        return None


def store(key: str, value: Any, *, kind: str = "spec", persistent_id: Callable[[Any], Any] | None = None) -> None:
    """Save ``value`` atomically; a cache that cannot be written (or a value that cannot be pickled) is not used."""
    directory = _directory()
    if directory is None:
        return
    temporary = None
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{kind}-", suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            pickler = pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
            if persistent_id is not None:
                pickler.persistent_id = persistent_id  # type: ignore[method-assign]
            pickler.dump(value)
        os.replace(temporary, directory / f"{kind}-{key}.pickle")
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
