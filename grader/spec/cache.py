"""A cache of validated specs, so a cold ``grader grade`` skips building and running validators.

Each entry is keyed by the spec file's bytes and a fingerprint of the code
that defines the models, so any edit to either misses the cache. Entries are
the grader's own objects, written by the grader into a private folder
(0700, owned by the current user); a file that is not ours, or that anyone
else could write, is ignored. Nothing a learner process produces is ever
stored here. ``GRADER_NO_CACHE=1`` turns the cache off; ``GRADER_CACHE_DIR``
moves it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["load", "spec_key", "store"]

_PACKAGE = Path(__file__).resolve().parents[1]


def _directory() -> Path | None:
    if os.environ.get("GRADER_NO_CACHE"):
        return None
    chosen = os.environ.get("GRADER_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "grader"


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> bytes:
    """Hash of the modules whose classes a cached spec is made of."""
    from grader import __version__

    digest = hashlib.sha256(__version__.encode())
    for folder in ("spec", "checks"):
        for path in sorted((_PACKAGE / folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def spec_key(raw: bytes) -> str:
    """The cache key of a spec file's bytes."""
    return hashlib.sha256(_code_fingerprint() + raw).hexdigest()


def load(key: str) -> Any | None:
    """The cached object, or ``None`` when absent, unsafe or unreadable."""
    directory = _directory()
    if directory is None:
        return None
    path = directory / f"spec-{key}.pickle"
    try:
        info = os.stat(path, follow_symlinks=False)
        folder = os.stat(directory, follow_symlinks=False)
        for item in (info, folder):
            if item.st_uid != os.geteuid() or item.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None


def store(key: str, value: Any) -> None:
    """Save ``value`` atomically; a cache that cannot be written is simply not used."""
    directory = _directory()
    if directory is None:
        return
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".spec-", suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, directory / f"spec-{key}.pickle")
    except OSError:
        return
