"""Learner text quoted back in results, bounded.

Whatever a submission holds (a removed notebook line, a file name, an
answers key) may be quoted in a note, and notes reach every result and
feedback file. Each quoted item is cut to ``ITEM_CHARS`` with its control
characters escaped, a list shows its first ``SHOWN`` items and "(and N
more)", and a report keeps at most ``MAX_NOTES`` notes of ``NOTE_CHARS``
each, so a hostile submission cannot make its own result large.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ITEM_CHARS", "MAX_NOTES", "NOTE_CHARS", "SHOWN", "bounded_notes", "clip", "excerpt", "listing"]

ITEM_CHARS = 200
SHOWN = 5
NOTE_CHARS = 2000
MAX_NOTES = 20


def excerpt(text: str, limit: int = ITEM_CHARS) -> str:
    """``text`` as it may be quoted: non-printable characters escaped, cut after ``limit`` characters, saying so.

    Only the first ``limit`` characters are looked at, so quoting a 16 MiB
    line costs no more than quoting a short one.
    """
    pieces: list[str] = []
    length = used = 0
    for ch in text[:limit]:
        piece = ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        if length + len(piece) > limit:
            break
        pieces.append(piece)
        length += len(piece)
        used += 1
    shown = "".join(pieces)
    if used < len(text):
        shown += f"... ({len(text) - used:,} more characters)"
    return shown


def listing(items: Sequence[str], total: int | None = None, *, shown: int = SHOWN, separator: str = "; ") -> str:
    """The first ``shown`` of ``items`` joined, then "(and N more)" when ``total`` (default: all items) is larger.

    Items are joined as given: quote learner text with :func:`excerpt` first.
    """
    total = len(items) if total is None else total
    text = separator.join(items[:shown])
    if total > min(shown, len(items)):
        text += f" (and {total - min(shown, len(items)):,} more)"
    return text


def clip(text: str, limit: int) -> str:
    """``text`` cut after ``limit`` characters, saying how many were cut; for sentences whose quotes are excerpts."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def bounded_notes(notes: Sequence[str], *, limit: int = MAX_NOTES, chars: int = NOTE_CHARS) -> list[str]:
    """At most ``limit`` notes of at most ``chars`` characters each; a last note counts the ones left out."""
    kept = [clip(note, chars) for note in notes[:limit]]
    if len(notes) > limit:
        kept.append(f"(and {len(notes) - limit:,} more notes about this submission, not shown)")
    return kept
