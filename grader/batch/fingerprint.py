"""A learner's fingerprint: a hash of exactly what grading that learner could read, found without risk.

The batch re-grades a learner only when its fingerprint changes, and hashes
every learner before the first is graded, so the fingerprint must be cheap
and must never hang, whatever a learner's folder holds. It therefore covers
what ``grader.submission.files`` reads and nothing else:

- A learner's folder is listed one level deep, since only the files directly
  in it are graded; subfolders, and whatever links lead to, are never entered.
  At most ``MAX_LISTED`` entries are listed: past that, the batch cannot tell a
  change, so the learner is graded on every run and its result says so.
- Of the entries listed, only names with a graded suffix (``.py``, ``.ipynb``,
  ``.yaml``, ``.yml``, ``.json``) count; their kind (file, link, other) and
  name always go in. Links are never followed, and nothing but a regular file
  is ever opened (a FIFO would block the open; a device never ends).
- A regular file's bytes are hashed when it is no larger than
  ``MAX_HASHED_BYTES`` (at least every size cap the grader reads a file
  with); a larger one is hashed by its size and modification time
  (``st_mtime_ns``): the grader refuses it for its size, and writing to a
  file changes its modification time, so the key still changes with it. Its
  result says the contents were not read. Past the first ``MAX_HASHED_FILES``
  regular files in the grader's order (more than it reads), only names count.
- When a folder holds several Python files or notebooks, their order by
  modification time goes in too, unless it is their order by name: it
  decides which of several files defining an entry is graded
  (``grader.submission.entry_files``), and a folder whose newest file is also its first
  by name keeps the digest it had before this rule.
- A file is opened by name relative to its folder, without following links
  and without blocking, and checked to be a regular file once open: an entry
  swapped for a link or a FIFO while the batch runs is never read through.

A file that changes while it is hashed gives a fingerprint that matches no
later state, so the next run grades the learner again.

Besides the digest (what the key holds, so that copying a class folder again
with the same bytes re-grades nothing), a fingerprint has a ``state``: the
identity and times of the entry and of every file it hashed (device, inode,
size, ``st_mtime_ns``, ``st_ctime_ns``). Any write or rename changes the
``st_ctime_ns`` or the inode of what it touches, and nobody can set either
back, so two fingerprints with equal digests and states saw the same files
with nothing written in between (``worker.grade_settled`` relies on it: a
copy that rewrites a file and ends with the same bytes still shows).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.batch.learners import display_name
from grader.submission import formats

__all__ = [
    "GRADED_SUFFIXES",
    "MAX_HASHED_BYTES",
    "MAX_HASHED_FILES",
    "MAX_LISTED",
    "Fingerprint",
    "fingerprint_learner",
]

GRADED_SUFFIXES = frozenset(formats.GRADED_SUFFIXES)  # what grader.submission.files reads
MAX_HASHED_BYTES = 16 << 20
MAX_HASHED_FILES = 256
MAX_LISTED = 200_000

_FORMAT = b"grader-learner-fingerprint/1"
_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "folder",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFIFO: "FIFO",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
}


@dataclass(frozen=True)
class Fingerprint:
    """The hash of a learner's entry, notes for its result, and whether an unchanged hash means unchanged.

    ``complete`` is false when the entry held more than the batch lists: the
    learner is then graded on every run. ``state``: a hash of the identity and
    times of what was hashed (see the module docstring); not part of any key.
    ``newest_change_ns``: the latest ``st_ctime_ns`` among them.
    """

    digest: str
    notes: tuple[str, ...] = ()
    complete: bool = True
    state: str = ""
    newest_change_ns: int = 0

    def same_files(self, other: Fingerprint) -> bool:
        """Whether ``other`` saw these very files: the same bytes, and nothing written or renamed in between."""
        return self.digest == other.digest and self.state == other.state


def graded_suffix(name: str) -> str:
    """The suffix ``pathlib`` gives ``name`` (``''`` for ``.py`` alone or ``a.``), which decides if it is read."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def fingerprint_learner(path: Path) -> Fingerprint:
    """Fingerprint one learner's entry under the class folder: a folder, a file, a link or anything else."""
    digest = hashlib.sha256(_FORMAT)
    state = hashlib.sha256(_FORMAT + b" state")
    name = os.fsencode(path.name)
    try:
        facts = os.lstat(path)
    except OSError as error:
        _put(digest, b"entry", name, b"unreadable", _error_name(error))
        return Fingerprint(digest.hexdigest(), state=_error_name(error).decode())
    if stat.S_ISDIR(facts.st_mode):
        # Its identity alone: its times change with any file made in it, graded or not (an editor's backup).
        _put(state, name, b"folder %d:%d" % (facts.st_dev, facts.st_ino))
        _put(digest, b"folder", name)
        return _fingerprint_folder(digest, state, path)
    _put_state(state, name, facts)
    notes: list[str] = []
    if stat.S_ISREG(facts.st_mode) and graded_suffix(path.name) in GRADED_SUFFIXES:
        _put(digest, b"entry", name)
        hash_graded_file(digest, notes, os.fspath(path.parent), path.name, facts)
    elif stat.S_ISLNK(facts.st_mode):  # never followed; the worker says so in the result
        _put(digest, b"entry", name, b"link", _readlink(path))
    else:  # a file the grader refuses by its suffix, or something not a file: nothing of it is read
        _put(digest, b"entry", name, b"not read", b"%o" % stat.S_IFMT(facts.st_mode))
    return Fingerprint(digest.hexdigest(), tuple(notes), state=state.hexdigest(), newest_change_ns=facts.st_ctime_ns)


def _fingerprint_folder(digest: Any, state: Any, path: Path) -> Fingerprint:
    try:
        folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:  # swapped for a link or a file since the lstat, or not ours to read
        _put(digest, b"unreadable", _error_name(error))
        _put(state, b"unreadable", _error_name(error))
        return Fingerprint(digest.hexdigest(), state=state.hexdigest())
    try:
        opened = os.fstat(folder)
        _put(state, b"opened", b"%d:%d" % (opened.st_dev, opened.st_ino))
        found, complete = _graded_entries(folder)
        notes: list[str] = []
        if not complete:
            notes.append(
                f"This folder holds more than {MAX_LISTED:,} entries, more than the batch lists, so it "
                "cannot tell whether the folder changed: it is graded again on every run."
            )
        _put(digest, b"entries", str(len(found)).encode())
        regulars = 0
        unread: list[bytes] = []
        code: list[tuple[int, str]] = []  # (modification time, name) of each Python file and notebook
        newest = 0
        for name, regular in found:
            regulars += regular
            if regular and regulars > MAX_HASHED_FILES:  # past what the grader reads: only the name counts
                unread.append(os.fsencode(name))
                continue
            try:
                facts = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except OSError as error:  # gone since the listing
                _put(digest, os.fsencode(name), b"unreadable", _error_name(error))
                continue
            _put_state(state, os.fsencode(name), facts)
            newest = max(newest, facts.st_ctime_ns)
            hash_graded_file(digest, notes, folder, name, facts)
            if stat.S_ISREG(facts.st_mode) and graded_suffix(name) in (".py", ".ipynb"):
                code.append((facts.st_mtime_ns, name))
        _put(digest, b"files past the first", b"\0".join(unread))
        newest_first = [name for _, name in sorted(code, key=_newest)]
        if newest_first != sorted(newest_first):  # the order in time can choose another file than the name order
            _put(digest, b"code files newest first", *map(os.fsencode, newest_first))
        if regulars > MAX_HASHED_FILES:
            notes.append(
                f"Of its {regulars} files the grader could read, the batch reads the first "
                f"{MAX_HASHED_FILES} (the grader reads fewer) to tell whether they changed; of the "
                "others, only their names count."
            )
        return Fingerprint(digest.hexdigest(), tuple(notes), complete, state.hexdigest(), newest)
    finally:
        os.close(folder)


def _newest(item: tuple[int, str]) -> tuple[int, str]:
    return -item[0], item[1]


def _graded_entries(folder: int) -> tuple[list[tuple[str, bool]], bool]:
    """``(name, regular file?)`` of the entries directly in ``folder`` with a graded suffix, in the grader's order
    (``sorted`` paths); and whether every entry was listed. The file types come from the listing, not a stat."""
    found: list[tuple[str, bool]] = []
    with os.scandir(folder) as entries:
        for count, entry in enumerate(entries, 1):
            if count > MAX_LISTED:
                return sorted(found), False
            if graded_suffix(entry.name) in GRADED_SUFFIXES:
                found.append((entry.name, entry.is_file(follow_symlinks=False)))
    return sorted(found), True


def hash_graded_file(digest: Any, notes: list[str], folder: int | str, name: str, facts: os.stat_result) -> None:
    """One entry with a graded suffix: its kind, then its bytes, or its size and modification time."""
    encoded = os.fsencode(name)
    kind = stat.S_IFMT(facts.st_mode)
    if kind == stat.S_IFLNK:
        _put(digest, encoded, b"link")  # the grader reads no link, wherever it points
        return
    if kind != stat.S_IFREG:
        _put(digest, encoded, b"not read", b"%o" % kind)
        notes.append(
            f"{display_name(name)!r} is a {_KINDS.get(kind, 'special file')}, not a regular file: "
            "it was not opened or graded."
        )
        return
    if facts.st_size > MAX_HASHED_BYTES:
        _put(digest, encoded, b"size and time", b"%d:%d" % (facts.st_size, facts.st_mtime_ns))
        notes.append(
            f"{display_name(name)!r} is larger than {MAX_HASHED_BYTES >> 20} MiB, so the batch tells "
            "whether it changed by its size and modification time, without reading it."
        )
        return
    try:
        _put(digest, encoded, b"bytes", _hash_contents(folder, name))
    except OSError as error:  # not ours to read, swapped for a link or a FIFO, or gone
        _put(digest, encoded, b"unreadable", _error_name(error))


def _hash_contents(folder: int | str, name: str) -> bytes:
    """The SHA-256 of at most ``MAX_HASHED_BYTES + 1`` bytes of a file that is regular once open."""
    if isinstance(folder, str):
        handle = os.open(os.path.join(folder, name), _OPEN_FLAGS)
    else:
        handle = os.open(name, _OPEN_FLAGS, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        contents = hashlib.sha256()
        left = MAX_HASHED_BYTES + 1
        while left > 0 and (chunk := os.read(handle, min(_CHUNK, left))):
            contents.update(chunk)
            left -= len(chunk)
        return contents.digest()
    finally:
        os.close(handle)


def _put(digest: Any, *parts: bytes) -> None:
    """Each part with its length: names may hold any byte but NUL, contents any byte at all."""
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    digest.update(b"\n")


def _put_state(state: Any, name: bytes, facts: os.stat_result) -> None:
    """What no write or rename leaves as it was: the inode, its size and times (``st_ctime_ns`` above all)."""
    _put(
        state,
        name,
        b"%d:%d:%o:%d:%d:%d"
        % (facts.st_dev, facts.st_ino, facts.st_mode, facts.st_size, facts.st_mtime_ns, facts.st_ctime_ns),
    )


def _readlink(path: Path) -> bytes:
    try:
        return os.fsencode(os.readlink(path))
    except OSError as error:
        return b"unreadable " + _error_name(error)


def _error_name(error: OSError) -> bytes:
    return errno.errorcode.get(error.errno or 0, "unknown").encode()
