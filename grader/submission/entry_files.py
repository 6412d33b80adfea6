"""Which file of a submission is graded for an entry function that several of its files define.

A learner may hand in a folder holding a draft and a final version, both
defining ``softmax``. Which one is graded must not depend on how the files
happen to be named, and must never be silent. The rule, in order:

1. the file the exercise names in its spec (``entry_file: softmax.py``),
   when the submission holds it and it defines the entry;
2. else the only file that defines the entry;
3. else the most recently modified of the files that define it, by their
   modification time as stored on disk (``st_mtime_ns``; ``grader batch``
   reads each learner's files in place, so those are the learner's own
   times); when several were modified last at the same time, the first of
   them by name (code point order).

A notebook takes part as the file it is: its own name and modification time
(its code cells are graded as ``STEM.py``, or under another name no learner file has). Whenever there was a choice, the
exercise's result carries a note naming the competing files and the one
graded, e.g. "softmax() is defined in draft.py and final.py; graded
final.py, the most recently modified."
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec import Struct

from grader.submission.excerpts import SHOWN, excerpt, listing

__all__ = ["EntryChoice", "choose_entry_file"]


class EntryChoice(Struct, frozen=True):
    """The module graded for one entry, and the note saying why when there was a choice (``None`` otherwise)."""

    module: str
    note: str | None = None


def choose_entry_file(
    entry: str,
    modules: Sequence[str],
    modified: Mapping[str, int],
    origins: Mapping[str, str] | None = None,
    named: str | None = None,
) -> EntryChoice:
    """The module to grade for ``entry`` among ``modules`` (the submission's modules that define it).

    ``modified``: each module's modification time in nanoseconds; ``origins``:
    the file a module came from when not itself (a notebook); ``named``: the
    exercise's ``entry_file``, if it names one.
    """
    origins = origins or {}

    def shown(module: str) -> str:
        return excerpt(origins.get(module, module))

    candidates = sorted(set(modules), key=shown)
    asked = [module for module in candidates if named is not None and named in (module, origins.get(module))]
    missing = ""
    if named is not None and not asked:
        missing = f" The exercise asks for {entry}() in {excerpt(named)}, which does not define it here."
    if asked:
        chosen, why = asked[0], "the file the exercise names (entry_file)"
    elif len(candidates) == 1:
        return EntryChoice(candidates[0], (missing + f" Graded {shown(candidates[0])}.").strip() if missing else None)
    else:
        newest = max(modified.get(module, 0) for module in candidates)
        latest = [module for module in candidates if modified.get(module, 0) == newest]
        chosen = latest[0]
        why = "the most recently modified" if len(latest) == 1 else "the first by name of those modified last, together"
    if len(candidates) == 1:
        return EntryChoice(chosen)
    named_files = listing([shown(module) for module in candidates], shown=SHOWN, separator=", ")
    return EntryChoice(chosen, f"{entry}() is defined in {_and(named_files)}; graded {shown(chosen)}, {why}.{missing}")


def _and(joined: str) -> str:
    """``a.py, b.py`` as ``a.py and b.py`` (a list of three or more keeps its commas)."""
    head, comma, last = joined.rpartition(", ")
    if not comma or " more)" in last:
        return joined
    return f"{head} and {last}" if ", " not in head else f"{head}, and {last}"
