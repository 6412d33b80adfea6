"""The command line: click commands over the library, and nothing else.

It owns parsing arguments, calling the public API, rendering a report in the
chosen format, and mapping errors to exit statuses (0, 1, 2, 3). It may
import every other package of the grader; nothing imports it. ``commands``
holds the click group and the grading commands, ``common`` what they share,
``batch`` (``grader batch``), ``authoring``, ``export`` and ``mistakes``
(``grader batch-mistake``) the instructor's commands, which ``lazy`` imports
only when a command line names one.
"""

from grader.cli.commands import command_named, main, run

__all__ = ["command_named", "main", "run"]
