"""Who is in the class: one learner per entry of the folder, each with a file name of its own.

An entry is a folder (the learner is its name) or a file (the learner is its
stem). The learner's exact name goes into the gradebook; results and
feedback are stored under a *file stem* that is safe on every file system:
the name itself when it is already plain lower-case ASCII, otherwise an ASCII
slug followed by a short hash of the exact name. So ``Ann`` and ``ann``,
``é`` and ``e``, or ``a b`` and ``a-b`` never share a result file, even on a
case-insensitive file system, and a learner keeps the same file whoever else
is in the class.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Learner", "discover_learners", "file_stem"]

_SKIPPED = {"__MACOSX", "__pycache__", "Thumbs.db", "desktop.ini"}
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]*")
_SLUG_MAX = 48


@dataclass(frozen=True)
class Learner:
    """One learner: the exact name, the entry under the class folder, and the stem of its output files."""

    name: str
    entry: str
    path: Path
    stem: str


def display_name(raw: str) -> str:
    """A file name as text: bytes that are not UTF-8 (``surrogateescape``) shown as U+FFFD."""
    return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def file_stem(name: str, *, digits: int = 10) -> str:
    """A file-system-safe stem for ``name``: the name when plain, else ``slug-hash``."""
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9._-]+", "-", ascii_text.lower()).strip("-._")[:_SLUG_MAX].strip("-._")
    if slug == name and _PLAIN.fullmatch(slug) and slug.split(".")[0] not in _RESERVED:
        return slug
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:digits]
    return f"{slug}-{digest}" if slug else f"learner-{digest}"


def discover_learners(directory: Path, *, exclude: Path | None = None) -> tuple[list[Learner], list[str]]:
    """Every learner under ``directory``, sorted by name, and notes for the instructor.

    Hidden entries (``.name``) and archive litter (``__MACOSX``) are skipped
    with a note; ``exclude`` (the output folder, when it sits inside the class
    folder) is skipped silently. When two entries would give the same learner
    name (``ann.py`` and ``ann.yaml``), each is named by its whole entry name.
    """
    notes: list[str] = []
    excluded = exclude.resolve() if exclude is not None else None
    found: list[tuple[str, Path]] = []
    for path in sorted(directory.iterdir(), key=lambda p: p.name):
        if excluded is not None and _leads_to(path, excluded):
            continue
        if path.name.startswith(".") or path.name in _SKIPPED:
            notes.append(f"skipped {display_name(path.name)!r}: hidden files and archive litter are not learners")
            continue
        found.append((path.name, path))
    by_name: dict[str, list[tuple[str, Path]]] = {}
    for entry, path in found:
        is_folder = path.is_dir() and not path.is_symlink()
        name = display_name(entry if is_folder else os.path.splitext(entry)[0] or entry)
        by_name.setdefault(name, []).append((entry, path))
    named: dict[str, tuple[str, Path]] = {}
    for name, entries in by_name.items():
        if len(entries) == 1:
            named[name] = entries[0]
            continue
        listed = ", ".join(repr(display_name(entry)) for entry, _ in entries)
        notes.append(f"{listed} would all be learner {name!r}: each is named by its whole entry name instead")
        for entry, path in entries:
            whole = display_name(entry)
            while whole in named or whole in by_name and whole != name:
                whole += "~"
            named[whole] = (entry, path)
    learners = [
        Learner(name=name, entry=display_name(entry), path=path, stem=file_stem(name))
        for name, (entry, path) in named.items()
    ]
    return _unique_stems(sorted(learners, key=lambda learner: learner.name)), notes


def _leads_to(path: Path, place: Path) -> bool:
    """Whether ``path``, its links followed, is ``place``; a link loop leads nowhere."""
    try:
        return path.resolve() == place
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        return False


def _unique_stems(learners: list[Learner]) -> list[Learner]:
    """Stems are unique ignoring case; a collision (only crafted names can make one) gets a longer hash."""
    seen: dict[str, int] = {}
    for learner in learners:
        seen[learner.stem.casefold()] = seen.get(learner.stem.casefold(), 0) + 1
    if all(count == 1 for count in seen.values()):
        return learners
    fixed = []
    for learner in learners:
        if seen[learner.stem.casefold()] > 1:
            learner = Learner(learner.name, learner.entry, learner.path, file_stem(learner.name + "\0", digits=32))
        fixed.append(learner)
    return fixed
