"""``grader batch``: a whole class graded into a gradebook, feedback for each learner and the class's pages.

The command only wires options to ``grader.batch.run_batch``: it boots the
warm parent first (the workers fork clones of it), loads the catalog while
it boots, refuses before any learner runs where the sandbox is too weak, and
prints the summary through the runner-command pass.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from grader.cli.common import (
    check_sandbox_layers,
    exercise_not_assignment,
    exercises_option,
    fail,
    guard,
    variant_secret_option,
)
from grader.cli.completion import complete_assignment_ids

__all__ = ["batch_command"]


@click.command("batch")
@click.argument("directory", type=click.Path())
@click.option(
    "--assignment",
    required=True,
    shell_complete=complete_assignment_ids,
    help="Grade every learner for this assignment ('all' for everything).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for gradebook.csv, results/, feedback/, summary.md and report.html.",
)
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: one per core].")
@click.option("--force", is_flag=True, help="Grade every learner again, even those unchanged since the last run.")
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Grade on a Dask cluster (tcp://HOST:8786) instead of this machine; needs the 'dask' extra.",
)
@click.option(
    "--allow-weak-sandbox",
    is_flag=True,
    help="Grade even where the sandbox is below tier A or failed its self-test (every result then carries a warning).",
)
@click.option(
    "--overrides",
    "overrides_file",
    default=None,
    metavar="FILE",
    help="The instructor's score overrides (YAML) [default: overrides.yaml beside the exercises folder, if any].",
)
@click.option(
    "--only",
    multiple=True,
    metavar="LEARNER",
    help="Grade only this learner (again, even if unchanged); the others' stored results are kept. Repeatable.",
)
@click.option(
    "--similarity",
    is_flag=True,
    help="Also write similarity.html: pairs of learners with unusually similar code or wrong outputs, for the "
    "instructor (never in feedback; changes no grade).",
)
@variant_secret_option
@exercises_option
@click.pass_context
@guard
def batch_command(
    ctx: click.Context,
    directory: str,
    assignment: str,
    out_dir: str,
    jobs: int | None,
    force: bool,
    scheduler: str | None,
    allow_weak_sandbox: bool = False,
    overrides_file: str | None = None,
    only: tuple[str, ...] = (),
    similarity: bool = False,
) -> None:
    """Grade every learner under DIRECTORY (one folder or file each): gradebook, feedback, class summary."""
    check_sandbox_layers()
    from grader.sandbox.parents import refuse_without_kernel_layers

    refuse_without_kernel_layers("grader batch")
    from grader.sandbox.warm_parent import WarmParent

    # The warm parent boots on the other core while the grader loads; after the preflight, each local
    # grading process gets a clone of it (a fork) instead of starting its own.
    with WarmParent.start() as warm_parent:
        from grader.authoring.handout import handout_code
        from grader.batch import run_batch
        from grader.batch.progress import auto_progress
        from grader.batch.worker import prepare
        from grader.grading import preflight_sandbox
        from grader.spec.loader import find_exercises_dir

        # Loaded while the warm parent boots (the preflight below waits for it); the workers inherit it all.
        catalog = prepare(find_exercises_dir(ctx.obj["exercises_dir"]).resolve(), assignment)
        exercise_not_assignment(catalog, assignment, hint="batch grades whole assignments; ")
        if allow_weak_sandbox:  # local workers inherit it; a Dask cluster's workers need it set there too
            os.environ["GRADER_ALLOW_WEAK_SANDBOX"] = "1"

        def preflight() -> None:  # refuse before any learner runs; meanwhile the learners were found and hashed
            preflight_sandbox(allow_weak_sandbox=allow_weak_sandbox or None, warm_parent=warm_parent)

        try:
            summary = run_batch(
                directory,
                assignment=assignment,
                out=out_dir,
                jobs=jobs,
                force=force,
                scheduler=scheduler,
                allow_weak_sandbox=allow_weak_sandbox,
                progress=auto_progress(),
                exercises_dir=ctx.obj["exercises_dir"],
                warm_parent=warm_parent,
                catalog=catalog,
                before_grading=preflight,
                overrides=overrides_file,
                only=only,
                similarity=handout_code(catalog, assignment) if similarity else None,
            )
        except KeyboardInterrupt:
            click.echo(
                f"grader: interrupted; every finished result is kept in {Path(out_dir) / 'results'}. "
                "Run the same command again to grade the rest.",
                err=True,
            )
            sys.exit(130)
    try:
        from grader.report._common import printable
        from grader.report.runner_safe import inert_lines

        click.echo(inert_lines(printable(summary.text())), nl=False)  # its notes name learners' files
    except BrokenPipeError:  # `grader batch ... | head`: the batch is complete, only the summary went unread
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if summary.grader_errors:
        fail(
            f"the grader itself failed on {len(summary.grader_errors)} learner(s), every other one is stored; "
            f"the details are in their {Path(out_dir) / 'results'}/*.key files. Please report it; the next run "
            "tries them once more, then keeps the failure until their files change or --force.",
            3,
        )
    sys.exit(0)
