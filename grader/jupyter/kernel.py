"""What a running IPython kernel holds: the code cells it ran, and which notebook it runs, where that is known.

Read, never run: the inputs are IPython's raw history (``In``, as typed,
before IPython turns magics into calls), which ``submission.notebook``
converts the way it converts a saved notebook's cells. IPython is never
imported here: a kernel has already imported it, and a plain interpreter
has no kernel to read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["KernelCells", "kernel_cells", "notebook_path", "running_shell"]

# The variables front ends set in a kernel for the notebook it runs: VS Code puts the path in the user's
# namespace, Jupyter Server (2.x and later) in the environment.
_VSCODE_NOTEBOOK = "__vsc_ipynb_file__"
_JUPYTER_SESSION = "JPY_SESSION_NAME"


class KernelCells:
    """The code cells a kernel ran, in order: ``(label, source)`` pairs labelled as Jupyter numbers them."""

    def __init__(self, inputs: list[tuple[int, str]]) -> None:
        self.cells: list[tuple[str, str | None]] = [(f"In [{number}]", source) for number, source in inputs]
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
    """The code cells ``shell`` ran, from its raw input history; empty ones are left out.

    ``In[n]`` is the cell of execution count ``n`` (``In[0]`` is always
    empty). The cell running ``grader.check`` is there too: it is the
    grader's own code, which the conversion leaves out.
    """
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    inputs = [(number, text) for number, text in enumerate(history) if number and isinstance(text, str)]
    return KernelCells([(number, text) for number, text in inputs if text.strip()])


def notebook_path(shell: Any) -> Path | None:
    """The notebook file the kernel runs, where the front end says (VS Code, Jupyter Server), else ``None``."""
    namespace = getattr(shell, "user_ns", None)
    named = [namespace.get(_VSCODE_NOTEBOOK) if isinstance(namespace, dict) else None, os.environ.get(_JUPYTER_SESSION)]
    for name in named:
        if isinstance(name, str) and name.endswith(".ipynb") and Path(name).is_file():
            return Path(name)
    return None
