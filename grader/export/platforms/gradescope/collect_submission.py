"""Gather the files of a Gradescope submission into one folder for the grader (standard library only).

Usage: collect_submission.py SUBMISSION_DIR STAGE_DIR NOTES_FILE

A learner may upload a zip holding a folder, or a repository whose code is
under ``src/``, while the grader reads the top level of one folder. So every
file the grader grades from (``.py``, ``.ipynb``, ``.yaml``, ``.yml``,
``.json``) anywhere under SUBMISSION_DIR is copied into STAGE_DIR, keeping
its modification time: among several files that define one function, the
grader's entry rule (``grader/submission/entry_files.py``) chooses by it.

Never read: folders whose name starts with ``.``, ``__MACOSX`` (a Mac's zip
metadata), ``__pycache__``, ``site-packages``, ``node_modules``, virtual
environments (a folder holding ``pyvenv.cfg``), symbolic links, and files
whose name starts with ``.`` or ``._``. Two files of one name in different
folders: the most recently modified is copied (of those modified last
together, the first by path), and NOTES_FILE gets one line for the learner
saying which, with paths relative to the submission's folder. The walk is
bounded: at most ``MAX_DEPTH`` folders deep and ``MAX_ENTRIES`` entries.
"""

from __future__ import annotations

import os
import shutil
import sys

SUFFIXES = (".py", ".ipynb", ".yaml", ".yml", ".json")
SKIPPED = {"__MACOSX", "__pycache__", "site-packages", "node_modules"}
MAX_DEPTH = 8
MAX_ENTRIES = 20_000
MAX_BYTES = 16 << 20  # a larger file is no submission file: the grader would refuse it anyway


def found_files(root: str) -> list[tuple[str, int]]:
    """Each graded file under ``root`` as (path relative to ``root``, modification time in ns), by path."""
    found: list[tuple[str, int]] = []
    seen = 0
    pending = [("", 0)]
    while pending and seen < MAX_ENTRIES:
        relative, depth = pending.pop()
        folder = os.path.join(root, relative) if relative else root
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        if relative and any(entry.name == "pyvenv.cfg" for entry in entries):
            continue  # a virtual environment: its packages are not the learner's work
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                break
            name = entry.name
            path = os.path.join(relative, name) if relative else name
            if name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if name not in SKIPPED and depth < MAX_DEPTH:
                    pending.append((path, depth + 1))
            elif name.endswith(SUFFIXES) and entry.is_file(follow_symlinks=False):
                stat = entry.stat(follow_symlinks=False)
                if stat.st_size <= MAX_BYTES:
                    found.append((path, stat.st_mtime_ns))
    return sorted(found)


def shown(path: str) -> str:
    """A path as a learner reads it: control characters escaped, at most 120 characters."""
    text = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in path)
    return text if len(text) <= 120 else text[:117] + "..."


def chosen_files(found: list[tuple[str, int]]) -> tuple[dict[str, str], list[str]]:
    """Which path is copied under each file name, and a note for each name held by several files."""
    by_name: dict[str, list[tuple[str, int]]] = {}
    for path, modified in found:
        by_name.setdefault(os.path.basename(path), []).append((path, modified))
    chosen: dict[str, str] = {}
    notes: list[str] = []
    for name, paths in sorted(by_name.items()):
        newest = max(modified for _, modified in paths)
        path = next(path for path, modified in paths if modified == newest)  # paths are sorted
        chosen[name] = path
        if len(paths) > 1:
            others = ", ".join(shown(other) for other, _ in paths if other != path)
            notes.append(
                f"Your submission holds {shown(name)} more than once; graded {shown(path)}, the most recently "
                f"modified, not {others}."
            )
    return chosen, notes


def main(argv: list[str]) -> int:
    """Copy the chosen files into STAGE_DIR and write the notes."""
    root, stage, notes_file = argv[1], argv[2], argv[3]
    os.makedirs(stage, exist_ok=True)
    chosen, notes = chosen_files(found_files(root))
    for name, path in chosen.items():
        shutil.copy2(os.path.join(root, path), os.path.join(stage, name))  # copy2 keeps the modification time
    with open(notes_file, "w", encoding="utf-8") as stream:
        stream.writelines(note + "\n" for note in notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
