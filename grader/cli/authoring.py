"""The author's commands: ``grader new`` writes an exercise's skeleton, ``grader release`` the learner handout.

The commands are thin: the files come from :mod:`grader.authoring.scaffold` and
:mod:`grader.authoring.release`.
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.cli.common import exercises_option, guard, load_specs
from grader.cli.completion import complete_assignment_ids

__all__ = ["new_command", "release_command"]


@click.command("new")
@click.argument("exercise_id")
@click.option(
    "--kind",
    type=click.Choice(["implementation", "class", "quiz"]),
    required=True,
    help="An implementation exercise (spec, reference stub, known-wrong solution), one whose entry is a class "
    "(the same, exercised by scripts), or a quiz (spec).",
)
@exercises_option
@click.pass_context
@guard
def new_command(ctx: click.Context, exercise_id: str, kind: str) -> None:
    """Write the commented skeleton of a new exercise; never overwrites anything."""
    from grader.authoring.scaffold import new_exercise
    from grader.errors import SpecError
    from grader.spec.folder import find_exercises_dir

    exercises_dir = find_exercises_dir(ctx.obj["exercises_dir"])
    taken = {p.stem for p in exercises_dir.iterdir() if p.suffix in (".yaml", ".yml")}
    try:
        catalog = load_specs(ctx)
        taken |= set(catalog.exercises) | set(catalog.assignments)
    except SpecError:  # another spec being written: its file name still counts as taken
        pass
    written = new_exercise(exercises_dir, exercise_id, kind, taken=taken)
    for path in written:
        click.echo(f"wrote {path}")
    if kind in ("implementation", "class"):
        click.echo(f"next: write the reference in {written[1]}, then run 'grader validate --exercise {exercise_id}'")
    else:
        click.echo(f"next: write the questions in {written[0]}, then run 'grader validate --exercise {exercise_id}'")


@click.command("release")
@click.option(
    "--out", "out_dir", required=True, type=click.Path(), help="Folder to write the handout to (new or empty)."
)
@click.option(
    "--assignment",
    default=None,
    shell_complete=complete_assignment_ids,
    help="Release only this assignment, after self-testing it ('grader validate'). [default: everything, "
    "not self-tested]",
)
@click.option("--force", is_flag=True, help="With --assignment: release even if the self-test finds problems.")
@click.option("--replace", is_flag=True, help="Replace a handout that an earlier 'grader release' wrote there.")
@exercises_option
@click.pass_context
@guard
def release_command(ctx: click.Context, out_dir: str, assignment: str | None, force: bool, replace: bool) -> None:
    """Write the learner handout: pages, stubs, answers template, public checks; nothing secret."""
    from grader.authoring.release import release_assignment, release_handout

    catalog = load_specs(ctx)
    if assignment is None:
        written = release_handout(catalog, out=out_dir, replace=replace)
    else:
        written = release_assignment(catalog, assignment, out=out_dir, replace=replace, force=force)
    click.echo(f"wrote {len(written)} files to {out_dir}")
    click.echo(
        f"learners check their work in that folder with: grader grade FILE --public "
        f"(or from elsewhere: grader --exercises {Path(out_dir) / 'public-checks'} grade FILE --public)"
    )
