"""What a running IPython kernel holds: the code cells it ran, which raised, and which notebook it runs.

Read, never run: the inputs are IPython's raw history (``In``, as typed,
before IPython turns magics into calls), which ``submission.notebook``
converts the way it converts a saved notebook's cells. Which cells raised
is not in that history: a ``CellOutcomes`` callback, registered on the
shell when ``grader`` is first imported in a kernel (and by ``check``),
records it from then on, so such a cell can be replayed as the kernel ran
it. IPython is never imported here: a kernel has already imported it, and
a plain interpreter has no kernel to read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["CellOutcomes", "KernelCells", "kernel_cells", "notebook_path", "running_shell", "watch_cells"]

# The variables front ends set in a kernel for the notebook it runs: VS Code puts the path in the user's
# namespace, Jupyter Server (2.x and later) in the environment.
_VSCODE_NOTEBOOK = "__vsc_ipynb_file__"
_JUPYTER_SESSION = "JPY_SESSION_NAME"


class CellOutcomes:
    """The execution counts of the cells that raised, as a ``post_run_cell`` callback of IPython's records them."""

    def __init__(self) -> None:
        self.raised: set[int] = set()

    def __call__(self, result: Any) -> None:
        count = getattr(result, "execution_count", None)
        if isinstance(count, int) and not getattr(result, "success", True):
            self.raised.add(count)


def watch_cells(shell: Any) -> CellOutcomes | None:
    """The ``CellOutcomes`` registered on ``shell``, registered now if it has none; ``None`` without events.

    Registered once per shell, and found again among the shell's own
    callbacks, so that it is the shell that holds what it records.
    """
    events = getattr(shell, "events", None)
    callbacks = getattr(events, "callbacks", None)
    if not isinstance(callbacks, dict):
        return None
    for callback in callbacks.get("post_run_cell", []):
        if isinstance(callback, CellOutcomes):
            return callback
    outcomes = CellOutcomes()
    events.register("post_run_cell", outcomes)  # type: ignore[union-attr]
    return outcomes


class KernelCells:
    """The code cells a kernel ran, in order: ``(label, source)`` pairs labelled as Jupyter numbers them, and the
    labels of those known to have raised (``raised``)."""

    def __init__(self, inputs: list[tuple[int, str]], raised: set[int] | None = None) -> None:
        self.cells: list[tuple[str, str | None]] = [(f"In [{number}]", source) for number, source in inputs]
        self.raised = {f"In [{number}]" for number, _ in inputs if number in (raised or set())}
        self.first = inputs[0][0] if inputs else None
        self.last = inputs[-1][0] if inputs else None

    def describe(self) -> str:
        """The sentence saying what was graded, for the report's notes."""
        if self.first is None:
            return "Graded the code this kernel ran: it has run no code cell yet."
        count = len(self.cells)
        span = f"In [{self.first}]" if count == 1 else f"In [{self.first}] to In [{self.last}]"
        cells = "1 cell" if count == 1 else f"{count} cells"
        return f"Graded the code this kernel ran: {cells} ({span}), as and in the order it ran them."


def running_shell() -> Any | None:
    """The IPython shell this code runs in, or ``None`` in a plain interpreter (or IPython without a shell)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython() if callable(get_ipython) else None


def kernel_cells(shell: Any) -> KernelCells:
    """The code cells ``shell`` ran, from its raw input history, and which raised; empty ones are left out.

    ``In[n]`` is the cell of execution count ``n`` (``In[0]`` is always
    empty). The cell running ``grader.check`` is there too: it is the
    grader's own code, which the conversion leaves out.
    """
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    inputs = [(number, text) for number, text in enumerate(history) if number and isinstance(text, str)]
    outcomes = watch_cells(shell)
    raised = outcomes.raised if outcomes is not None else set()
    return KernelCells([(number, text) for number, text in inputs if text.strip()], raised)


def notebook_path(shell: Any) -> Path | None:
    """The notebook file the kernel runs, where the front end says (VS Code, Jupyter Server), else ``None``."""
    namespace = getattr(shell, "user_ns", None)
    named = [namespace.get(_VSCODE_NOTEBOOK) if isinstance(namespace, dict) else None, os.environ.get(_JUPYTER_SESSION)]
    for name in named:
        if isinstance(name, str) and name.endswith(".ipynb") and Path(name).is_file():
            return Path(name)
    return None
