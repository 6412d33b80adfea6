"""Result keys and atomic writes: nothing lost, nothing graded twice.

A learner's result is stored as three files, written in this order, each
through a temporary file in the same folder and ``os.replace``:

``results/STEM.json``   the contract's JSON result
``feedback/STEM.md``    the learner's feedback
``results/STEM.key``    the *commit marker*: the key the result was graded under

A result counts as finished only when its ``.key`` file names the key the
learner has now, so a run stopped between two of the writes simply grades
that learner again. The key hashes everything the result depends on: the
learner's fingerprint (the files grading reads, see ``fingerprint``), every
file of the exercises folder, every file the specs name
(``grader.spec.files``: solutions, given functions, answer keys), the
assignment id, the grader's version and a digest of its own source code.

A result the grader failed on (``KeyRecord.grader_error``) is graded again
once under the same key; a second failure is kept, like a result, until the
key changes or the batch is forced.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grader
from grader import __version__
from grader.batch.fingerprint import fingerprint_learner
from grader.engine.variants import read_secret, secret_fingerprint
from grader.spec.files import spec_files_of
from grader.spec.loader import Catalog

__all__ = ["KeyRecord", "learner_digest", "read_key", "result_key", "spec_digest", "write_atomically"]

_KEY_FORMAT = "grader-batch-key/1"
GRADER_ERROR_TRIES = 2  # a transient failure (a machine hiccup) gets a second chance; a bug fails again
_CHUNK = 1 << 20


@dataclass(frozen=True)
class KeyRecord:
    """What a ``.key`` file holds: the key, who it belongs to, and whether grading itself failed.

    ``failures``: how many runs in a row the grader failed on this learner
    under this key (0 when ``grader_error`` is ``None``).
    """

    key: str
    learner: str
    entry: str
    grader_error: str | None = None
    failures: int = 0

    def dumps(self) -> str:
        return (
            json.dumps(
                {
                    "key": self.key,
                    "learner": self.learner,
                    "entry": self.entry,
                    "grader_error": self.grader_error,
                    "failures": self.failures,
                },
                ensure_ascii=False,
                indent=2,
            )
            + "\n"
        )

    @property
    def failure_kept(self) -> bool:
        """The grader failed on this learner as often as it tries: the failure stands until the key changes."""
        return self.grader_error is not None and self.failures >= GRADER_ERROR_TRIES


def read_key(path: Path) -> KeyRecord | None:
    """The record in ``path``, or ``None`` when it is missing or unreadable (then the learner is graded again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        error = data.get("grader_error")
        failures = data.get("failures", 0 if error is None else 1)  # records from before the count: one failure
        if not isinstance(failures, int) or isinstance(failures, bool):
            raise TypeError("failures")
        return KeyRecord(
            key=str(data["key"]),
            learner=str(data["learner"]),
            entry=str(data["entry"]),
            grader_error=None if error is None else str(error),
            failures=failures,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _hash_file(digest: Any, path: str | Path) -> None:
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)


def _files_under(root: Path) -> list[tuple[str, str]]:
    """``(relative name, path)`` of every regular file and link under ``root``; links are not followed."""
    top = os.fspath(root)
    if not os.path.isdir(top) or os.path.islink(top):
        return [(root.name, top)]
    found = []
    for folder, subfolders, names in os.walk(top, followlinks=False):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        prefix = os.path.relpath(folder, top).replace(os.sep, "/") + "/"
        prefix = "" if prefix == "./" else prefix
        for name in names:
            found.append((prefix + name, os.path.join(folder, name)))
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def _hash_tree(digest: Any, root: Path, *, label: str) -> None:
    """Names and bytes of every regular file under ``root`` (or ``root`` itself), in a fixed order."""
    files = _files_under(root)
    digest.update(f"{label}\0{len(files)}\0".encode())
    for name, path in files:
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            facts = os.lstat(path)
        except FileNotFoundError:  # gone since the listing
            facts = None
        if facts is not None and stat.S_ISLNK(facts.st_mode):
            digest.update(b"link\0" + os.fsencode(os.readlink(path)) + b"\0")
        elif facts is not None and stat.S_ISREG(facts.st_mode):
            digest.update(str(facts.st_size).encode() + b"\0")
            _hash_file(digest, path)
        else:
            digest.update(b"special\0")


def learner_digest(path: Path) -> str:
    """A hash of what grading a learner's entry reads (``fingerprint.fingerprint_learner``)."""
    return fingerprint_learner(path).digest


@functools.lru_cache(maxsize=1)
def grader_source_digest() -> str:
    """A hash of the grader's own code: a fix without a version bump still invalidates old results."""
    package = Path(grader.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).as_posix()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        _hash_file(digest, path)
    return digest.hexdigest()


def spec_digest(catalog: Catalog, exercises_dir: Path) -> str:
    """A hash of the specs a worker grades with: exercise files, every file they name, grader version, sandbox layers.

    The files a spec names (reference and known-wrong solutions, given
    functions, a handout's answers) come from ``grader.spec.files``, the list
    the loader checks them by.

    Workers compare it with the batch's, so a worker with other files never stores results under its key.
    """
    digest = hashlib.sha256()
    digest.update(f"{_KEY_FORMAT}\0{__version__}\0".encode())
    digest.update(f"layers={os.environ.get('GRADER_SANDBOX_LAYERS', 'all')}\0".encode())
    _hash_tree(digest, exercises_dir, label="exercises")
    for source in sorted(catalog.sources.values()):  # a spec that is a link: the bytes the loader read
        digest.update(f"spec\0{source.name}\0".encode())
        _hash_named_file(digest, source)
    for relative in spec_files_of(catalog.exercises.values()):
        digest.update(f"spec file\0{relative}\0".encode())
        _hash_named_file(digest, catalog.resolve(relative))
    if any(getattr(exercise, "params", None) for exercise in catalog.exercises.values()):
        # another course secret draws other variants: a keyed fingerprint of it, never the secret itself
        digest.update(f"variants\0{secret_fingerprint(read_secret())}\0".encode())
    return digest.hexdigest()


def _hash_named_file(digest: Any, path: Path) -> None:
    """The bytes of a file a spec names, links followed as grading follows them; a file gone or odd says so."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        digest.update(f"unreadable\0{error.errno}\0".encode())
        return
    with os.fdopen(handle, "rb") as stream:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            digest.update(b"not a file\0")
            return
        digest.update(b"bytes\0")
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)


def result_key(learner_hash: str, specs_hash: str, assignment: str) -> str:
    """The key of one learner's result: its files, the specs, the assignment, the grader's code."""
    text = f"{_KEY_FORMAT}\0{assignment}\0{specs_hash}\0{grader_source_digest()}\0{learner_hash}"
    return hashlib.sha256(text.encode()).hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    The file gets the mode a shell's ``>`` would give it: an existing file
    keeps its own (a gradebook an instructor made private stays private), a
    new one ``0o666`` less the umask, not the temporary file's ``0o600``.
    """
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~current_umask()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def current_umask() -> int:
    """The process's umask now, read from ``/proc`` where it can be, without changing it.

    Setting it to read it back (the only other way) would, for that instant,
    give files other threads create the wrong mode.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def remove_stale_temporaries(folder: Path) -> int:
    """Delete temporary files a killed run left behind (``.NAME.XXXX.tmp``); return how many."""
    removed = 0
    for path in folder.glob(".*.tmp"):
        if path.is_file():
            path.unlink()
            removed += 1
    return removed
