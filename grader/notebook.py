"""Turn a learner's Jupyter notebook into the Python file it stands for, without running it.

The notebook is untrusted JSON parsed in the grader's process, so it is
bounded (size, nesting) and checked for shape. Code cells are joined in
order; IPython-only lines (``%magic``, ``!shell``, ``name?``) and cells
(``%%magic``) are dropped with a note, because plain Python cannot run them
and the grader does not offer a shell.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["MAX_NOTEBOOK_BYTES", "NOTEBOOK_SUFFIX", "NotebookProblem", "notebook_to_python"]

NOTEBOOK_SUFFIX = ".ipynb"
MAX_NOTEBOOK_BYTES = 16 << 20  # outputs (plots) make notebooks large; their code is small
_SHOWN = 3

# A line IPython would run but Python cannot: ``%time f()``, ``!pip install x``,
# ``files = !ls``, ``x = %env HOME``, ``np.exp?`` (any line ending in ``?`` outside a string or comment).
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!](?!=)|[^#'\"]*\?{1,2}\s*$)")


class NotebookProblem(ValueError):
    """The notebook cannot be used; the message says why, for the learner."""


def notebook_to_python(path: Path) -> tuple[bytes, list[str]]:
    """The code cells of the notebook at ``path`` as one UTF-8 Python source, and notes for the learner."""
    name = path.name
    with path.open("rb") as stream:
        raw = stream.read(MAX_NOTEBOOK_BYTES + 1)
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem(f"{name} is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB and was not graded; "
                              "clear its outputs (Kernel > Restart & Clear Output) and save it again.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise NotebookProblem(f"{name} is not UTF-8 text, so it is not a notebook Jupyter saved; "
                              "it was not graded.") from None
    except RecursionError:
        raise NotebookProblem(f"{name} is nested too deeply to be a notebook; it was not graded.") from None
    except ValueError as exc:
        raise NotebookProblem(f"{name} is not valid notebook JSON ({exc}); it was not graded.") from None
    cells = _code_cells(data)
    if cells is None:
        raise NotebookProblem(f"{name} does not have the shape of a Jupyter notebook (no list of cells); "
                              "it was not graded.")
    parts: list[str] = []
    removed: list[str] = []
    for number, source in cells:
        if source.lstrip().startswith("%%"):
            removed.append(f"cell {number}: {_first_line(source)} (the whole cell)")
            continue
        lines = []
        for line in source.splitlines():
            if _IPYTHON_LINE.match(line):
                removed.append(f"cell {number}: {line.strip()}")
                indent = line[: len(line) - len(line.lstrip())]
                lines.append(f"{indent}pass  # IPython-only line removed by the grader")
            else:
                lines.append(line)
        parts.append(f"# cell {number}\n" + "\n".join(lines) + "\n")
    counted = f"{len(parts)} code cell{'s' if len(parts) != 1 else ''}"
    notes = [f"{name}: graded as one Python file made of its {counted}, in order."]
    if removed:
        shown = "; ".join(removed[:_SHOWN])
        more = f" (and {len(removed) - _SHOWN} more)" if len(removed) > _SHOWN else ""
        notes.append(f"{name}: IPython magics and shell commands do not run in the grader and were removed: "
                     f"{shown}{more}.")
    return "\n".join(parts).encode("utf-8"), notes


def _code_cells(data: Any) -> list[tuple[int, str]] | None:
    """``(cell number, source)`` of every code cell; nbformat 4, and 3's worksheets."""
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
    found: list[tuple[int, str]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get(field, "")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if isinstance(source, str):
            found.append((number, source))
    return found


def _first_line(source: str) -> str:
    return source.strip().splitlines()[0] if source.strip() else ""
