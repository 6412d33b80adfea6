"""``grader batch-mistake``: write one shared mistake of a batch out as a known-wrong solution stub.

Thin over :mod:`grader.batch.mistake_stub`; the groups are those ``summary.md``
and ``report.html`` number.
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.cli.common import exercises_option, guard

__all__ = ["batch_mistake_command"]


@click.command("batch-mistake")
@click.argument("out_dir", metavar="OUTDIR", type=click.Path())
@click.argument("group", type=click.IntRange(min=1))
@click.option("--class", "class_dir", required=True, type=click.Path(), help="The class folder the batch graded (DIR).")
@click.option(
    "--out", "destination", required=True, type=click.Path(), help="The stub to write (.py); never overwritten."
)
@exercises_option
@click.pass_context
@guard
def batch_mistake_command(ctx: click.Context, out_dir: str, group: int, class_dir: str, destination: str) -> None:
    """Write GROUP's example (summary.md's shared mistakes) as a known-wrong stub, and print its known_wrong entry."""
    from grader.batch.mistake_stub import write_mistake_stub

    stub = write_mistake_stub(
        Path(out_dir), group, Path(class_dir), Path(destination), root=_project_root(ctx.obj.get("exercises_dir"))
    )
    mistake = stub.mistake
    click.echo(
        f"Wrote {destination}: the code of one of the {len(mistake.learners)} learners of group {group} "
        f"({mistake.exercise}, failing {', '.join(mistake.checks)}).\n"
        f"Add this under known_wrong: in the spec of {mistake.exercise}, write its misconception, "
        "then run grader validate:\n"
    )
    click.echo(stub.entry, nl=False)


def _project_root(option: str | None) -> Path | None:
    """The folder holding the specs' folder, which a spec's ``path:`` is relative to; ``None`` when none is found."""
    from grader.errors import GraderError
    from grader.spec.folder import find_exercises_dir

    try:
        return find_exercises_dir(option).resolve().parent
    except GraderError:
        return None
