"""``python -m grader.cli``: the same as the ``grader`` command."""

from grader.cli.commands import run

run()
