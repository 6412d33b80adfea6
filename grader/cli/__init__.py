"""The command line: click commands over the library, and nothing else.

It owns parsing arguments, calling the public API, rendering a report in the
chosen format, and mapping errors to exit statuses (0, 1, 2, 3). It may
import every other package of the grader; nothing imports it. ``commands``
holds the click group and the grading commands, ``common`` what they share,
``batch`` (``grader batch``), ``authoring``, ``export`` and ``mistakes``
(``grader batch-mistake``) the instructor's commands.
"""

import os

# Before anything here imports NumPy: the grading process works on small arrays, so BLAS threads would
# only cost their start (most of a bare ``import numpy``'s CPU on two cores) and contend for the cores
# with the learner processes and the warm parent. A setting of the user's own is kept.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

from grader.cli.commands import command_named, main, run  # noqa: E402 - after the thread settings

__all__ = ["command_named", "main", "run"]
