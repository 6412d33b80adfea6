"""Turn a learner's Jupyter notebook into the Python file it stands for, without running it.

The notebook is untrusted JSON parsed in the grader's process, so every
step is bounded and linear in its size: the file (``MAX_NOTEBOOK_BYTES``),
the number of JSON values it may hold (``MAX_NOTEBOOK_VALUES``, which bounds
the memory parsing takes), its nesting (Python's recursion limit), and the
Python its code cells come to (``MAX_CODE_BYTES``, as for a ``.py`` file).
Code cells are joined in order; IPython-only lines (``%magic``, ``!shell``,
``name?``) and cells (``%%magic``) are dropped with a note, because plain
Python cannot run them and the grader does not offer a shell. Code that only
imports or calls the grader (a learner checking their work with
``grader.check``) is left out with a note too (``grader_cells``): the grader
is not there to call where the learner's code runs. Every way a
notebook can be unusable is a ``NotebookProblem`` whose message names the
file, so the learner is graded with a reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from grader.submission.excerpts import SHOWN, excerpt, listing
from grader.submission.formats import MAX_CODE_BYTES, MAX_NOTEBOOK_BYTES, NOTEBOOK_SUFFIX

if TYPE_CHECKING:
    from grader.submission.grader_cells import GraderCells

__all__ = [
    "MAX_CODE_BYTES",
    "MAX_NOTEBOOK_BYTES",
    "MAX_NOTEBOOK_VALUES",
    "NOTEBOOK_SUFFIX",
    "ConvertedCells",
    "NotebookProblem",
    "convert_cells",
    "convert_notebook",
    "is_ipython_line",
    "notebook_to_python",
]

# Parsed JSON costs up to about 70 bytes a value (an empty object); a notebook's cells need few values.
MAX_NOTEBOOK_VALUES = 1 << 21
# The targets of ``files = !ls``: one character class repeated and anchored at both ends, so matching is linear.
_TARGETS = re.compile(r"[\w.,\s]+")
# What ``str.splitlines`` splits on: counting them bounds the lines of a cell before it is split.
_LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_LINE_BREAK = re.compile("|".join(map(re.escape, _LINE_BREAKS)))
_CLEAR = "clear its outputs (Kernel > Restart & Clear Output) and save it again"


class NotebookProblem(ValueError):
    """The notebook cannot be used; the message says why, for the learner."""


class ConvertedCells(Struct, frozen=True):
    """Code cells joined into one Python source: ``source`` (UTF-8), how many cells it holds (``cells``), and
    ``notes`` for the learner on what was left out."""

    source: bytes
    cells: int
    notes: list[str]


def notebook_to_python(path: Path) -> tuple[bytes, list[str]]:
    """The code cells of the notebook at ``path`` as one UTF-8 Python source, and notes for the learner."""
    with path.open("rb") as stream:
        raw = stream.read(MAX_NOTEBOOK_BYTES + 1)
    return convert_notebook(raw, path.name)


def convert_notebook(raw: bytes, filename: str) -> tuple[bytes, list[str]]:
    """:func:`notebook_to_python` on the notebook's bytes; ``filename`` names it in the notes."""
    name = excerpt(filename)
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem(f"{name} is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB and was not graded; {_CLEAR}.")
    # Every JSON value but the first follows a comma or opens a list or object: counting those bounds the values.
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") > MAX_NOTEBOOK_VALUES:
        raise NotebookProblem(
            f"{name} holds more than {MAX_NOTEBOOK_VALUES:,} JSON values (counted by its commas "
            f"and brackets), more than a notebook's code needs, and was not graded; {_CLEAR}."
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise NotebookProblem(
            f"{name} is not UTF-8 text, so it is not a notebook Jupyter saved; it was not graded."
        ) from None
    except RecursionError:
        raise NotebookProblem(f"{name} is nested too deeply to be a notebook; it was not graded.") from None
    except ValueError as exc:
        raise NotebookProblem(f"{name} is not valid notebook JSON ({excerpt(str(exc))}); it was not graded.") from None
    cells = _code_cells(data)
    if cells is None:
        raise NotebookProblem(
            f"{name} does not have the shape of a Jupyter notebook (no list of cells); it was not graded."
        )
    converted = _Conversion(name).run([(f"cell {number}", source) for number, source in cells])
    counted = f"{converted.cells} code cell{'s' if converted.cells != 1 else ''}"
    head = f"{name}: graded as one Python file made of its {counted}, in order."
    return converted.source, [head, *converted.notes]


def convert_cells(cells: list[tuple[str, str | None]], name: str, *, raised: Collection[str] = ()) -> ConvertedCells:
    """Code cells, each ``(label, source)`` in the order they ran, as one Python source with notes.

    What a notebook's conversion does to its cells (IPython-only lines and
    the grader's own code left out, the size capped), for cells that come
    from elsewhere than a saved file: the inputs a running kernel holds.
    ``label`` names the cell in notes (``"In [3]"``), ``name`` their source.
    The cells labelled in ``raised`` raised when the kernel ran them: each
    is run as the kernel ran it, its own code compiled and run on its own
    and its exception ignored, so what it did before raising still counts
    and the cells after it still run. Raises ``NotebookProblem`` when they
    come to more Python than a file may hold.
    """
    return _Conversion(excerpt(name), raised=raised).run(cells)


def is_ipython_line(line: str) -> bool:
    """Whether IPython would run ``line`` but Python cannot: ``%time f()``, ``!pip install x``, ``files = !ls``,
    ``x = %env HOME``, ``np.exp?`` (a line ending in ``?`` with no ``#``, ``'`` or ``"`` in it).

    Plain string operations, each one pass over the line, so a crafted line
    costs time in proportion to its length.
    """
    if "%" not in line and "!" not in line and "?" not in line:
        return False
    if line.lstrip()[:1] in ("%", "!"):
        return True
    equals = line.find("=")
    if equals > 0 and _TARGETS.fullmatch(line, 0, equals):
        value = line[equals + 1 :].lstrip()
        if value[:1] in ("%", "!") and value[1:2] != "=":
            return True
    return line.rstrip().endswith("?") and not any(mark in line for mark in "#'\"")


class _Conversion:
    """Joins code cells into one source, keeping the first few cells and lines left out to show and a count of all."""

    def __init__(self, name: str, *, raised: Collection[str] = ()) -> None:
        self.name = name
        self.raised = set(raised)
        self.replayed: list[str] = []  # the cells of ``raised`` run with their exception ignored
        self.parts: list[bytes] = []
        self.size = 0
        self.removed: list[str] = []
        self.removed_count = 0
        from grader.submission.grader_cells import GraderCells  # only a notebook needs it: a .py grade never loads it

        self.grader: GraderCells = GraderCells()
        self.left_out: dict[str, list[str]] = {"grader": [], "stripped": [], "mixed": []}  # first labels, by verdict
        self.left_out_count: dict[str, int] = dict.fromkeys(self.left_out, 0)
        self.not_text: list[str] = []
        self.not_text_count = 0

    def run(self, cells: list[tuple[str, str | None]]) -> ConvertedCells:
        for label, source in cells:
            if source is None:
                self.not_text_count += 1
                if len(self.not_text) < SHOWN:
                    self.not_text.append(label)
                continue
            self._add(label, source)
        notes = []
        if self.removed_count:
            notes.append(
                f"{self.name}: IPython magics and shell commands do not run in the grader and were removed: "
                f"{listing(self.removed, self.removed_count)}."
            )
        notes += self._grader_notes()
        if self.replayed:
            one = len(self.replayed) == 1
            notes.append(
                f"{self.name}: {listing(self.replayed, separator=', ')} raised an exception when "
                f"{'it' if one else 'they'} ran, so {'it runs' if one else 'they run'} here the same way, "
                f"{'its' if one else 'each'} exception ignored: what {'it' if one else 'each'} did before raising "
                "still counts."
            )
        if self.not_text_count:
            notes.append(
                f"{self.name}: code cells whose source is not text were left out: "
                f"{listing(self.not_text, self.not_text_count, separator=', ')}."
            )
        return ConvertedCells(b"\n".join(self.parts), len(self.parts), notes)

    def _grader_notes(self) -> list[str]:
        """What was done with the grader's own code, one note per kind of cell."""
        notes = []
        counts = self.left_out_count
        shown = {kind: listing(labels, counts[kind], separator=", ") for kind, labels in self.left_out.items()}
        if self.left_out_count["grader"]:
            notes.append(f"{self.name}: cells that only import or call the grader were left out: {shown['grader']}.")
        if self.left_out_count["stripped"]:
            one = self.left_out_count["stripped"] == 1
            notes.append(
                f"{self.name}: lines that import or call the grader were left out of {shown['stripped']}; "
                f"the rest of {'that cell' if one else 'those cells'} was graded."
            )
        if self.left_out_count["mixed"]:
            one = self.left_out_count["mixed"] == 1
            notes.append(
                f"{self.name}: {shown['mixed']} {'mixes' if one else 'mix'} the grader's lines with your code in a "
                f"way that cannot be taken apart safely, so {'it was' if one else 'they were'} graded as written, "
                "where the grader cannot be called; put the grader's lines in a cell of their own."
            )
        return notes

    def _add(self, label: str, source: str) -> None:
        if source.lstrip().startswith("%%"):
            self._remove(label, _first_line(source), " (the whole cell)")
            return
        breaks = sum(map(source.count, _LINE_BREAKS)) - source.count("\r\n")
        if breaks > MAX_CODE_BYTES:  # each line is at least a byte of the result
            self._too_large()
        lines = source.splitlines()
        room = MAX_CODE_BYTES - self.size
        if any(mark in source for mark in "%!?"):  # only then can a line be IPython's
            for index, line in enumerate(lines):
                if is_ipython_line(line):
                    self._remove(label, line.strip())
                    indent = line[: len(line) - len(line.lstrip())]
                    lines[index] = f"{indent}pass  # IPython-only line removed by the grader"
                    room -= len(lines[index])
                    if room < 0:  # short magics grow into longer lines: stop as soon as the result is too large
                        self._too_large()
        verdict = self.grader.judge("\n".join(lines))
        if verdict.kind != "code":
            self.left_out_count[verdict.kind] += 1
            if len(self.left_out[verdict.kind]) < SHOWN:
                self.left_out[verdict.kind].append(label)
            if verdict.kind == "grader":
                return
        kept = verdict.source
        if label in self.raised:
            kept = _as_the_kernel_ran(label, kept)
            self.replayed.append(label)
        try:
            part = (f"# {label}\n" + kept + "\n").encode("utf-8")
        except UnicodeEncodeError:
            raise NotebookProblem(
                f"{self.name}: {label} holds text that is not valid Unicode (an unpaired "
                "surrogate such as \\ud800), so it is not a notebook Jupyter saved; "
                "it was not graded."
            ) from None
        self.size += len(part) + 1
        if self.size > MAX_CODE_BYTES:
            self._too_large()
        self.parts.append(part)

    def _remove(self, label: str, line: str, what: str = "") -> None:
        self.removed_count += 1
        if len(self.removed) < SHOWN:
            self.removed.append(f"{label}: {excerpt(line)}{what}")

    def _too_large(self) -> None:
        raise NotebookProblem(
            f"{self.name}: its code cells come to more than {MAX_CODE_BYTES >> 20} MiB of Python, "
            "the most the grader reads from a .py file; it was not graded."
        )


def _as_the_kernel_ran(label: str, source: str) -> str:
    """Code that runs ``source`` as a kernel runs a cell that raises: up to the exception, which ends only it.

    Compiled when it runs, so a cell the kernel could not even parse ends
    the same way rather than failing the whole file.
    """
    return (
        "try:\n"
        f"    exec(compile({source!r}, {label!r}, 'exec'), globals())  # it raised in the kernel too\n"
        "except Exception:\n"
        "    pass\n"
    )


def _code_cells(data: Any) -> list[tuple[int, str | None]] | None:
    """``(cell number, source)`` of every code cell, ``None`` for a source that is not text; nbformat 4, and 3's
    worksheets."""
    if not isinstance(data, dict):
        return None
    cells: Any = data.get("cells")
    field = "source"
    if cells is None and isinstance(data.get("worksheets"), list):
        sheets = [sheet.get("cells") for sheet in data["worksheets"] if isinstance(sheet, dict)]
        cells = [cell for sheet_cells in sheets if isinstance(sheet_cells, list) for cell in sheet_cells]
        field = "input"
    if not isinstance(cells, list):
        return None
    found: list[tuple[int, str | None]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get(field, "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        found.append((number, source if isinstance(source, str) else None))
    return found


def _first_line(source: str) -> str:
    """The first line of ``source``, found without splitting the rest (a cell may hold millions of lines)."""
    stripped = source.strip()
    end = _LINE_BREAK.search(stripped)
    return stripped[: end.start()] if end else stripped
