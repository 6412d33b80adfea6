"""``grader export``: the files a course platform needs, written where the options say.

The commands are thin: the text and bytes come from :mod:`grader.export`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from grader.cli.common import exercise_not_assignment, exercises_option, guard, load_specs, write_atomically
from grader.cli.completion import complete_assignment_ids

__all__ = ["export_group"]


@click.group("export")
def export_group() -> None:
    """Write what a course platform needs: a CI workflow, a Gradescope autograder, a PrairieLearn or Exercism image."""


def _ci_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options both CI templates take; each value is written into the file, to edit later."""
    options = [
        click.option(
            "--out",
            "out_dir",
            required=True,
            type=click.Path(file_okay=False),
            help="The learner repository's root folder (or a folder to copy from).",
        ),
        click.option(
            "--assignment",
            required=True,
            shell_complete=complete_assignment_ids,
            help="The assignment to grade ('all' for everything).",
        ),
        click.option(
            "--submission",
            default=".",
            show_default=True,
            help="What to grade, relative to the repository's root: a file or a folder.",
        ),
        click.option(
            "--specs",
            default="public-checks",
            show_default=True,
            help="The specs folder in the repository (the handout's public-checks).",
        ),
        click.option(
            "--min-score",
            type=click.FloatRange(0, 1),
            default=1.0,
            show_default=True,
            help="The job fails below this fraction of the points.",
        ),
        click.option(
            "--public/--all-checks",
            "public_only",
            default=True,
            show_default=True,
            help="Run only public checks (the repository is the learner's to read), or every check its specs hold.",
        ),
        click.option(
            "--install",
            default=None,
            metavar="REQUIREMENT",
            help="How the job installs the grader: a pip requirement ('grader==0.1.0', "
            "'git+https://...'). [default: this grader's wheel, written to .grader/ in --out]",
        ),
        click.option(
            "--python", "python_version", default="3.11", show_default=True, help="The Python version the job uses."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _ci_recipe(ctx: click.Context, out_dir: str, install: str | None, **values: Any) -> Any:
    """The recipe the options describe; without ``--install``, the grader's wheel goes into the repository.

    Where specs are at hand (``--exercises``, ``GRADER_EXERCISES``, ``./exercises``), the assignment must be
    one of theirs, so a typo is caught here rather than in every learner's first run.
    """
    from grader.export.ci import recipe_installing

    if ctx.obj["exercises_dir"] or Path(os.environ.get("GRADER_EXERCISES") or "exercises").is_dir():
        catalog = load_specs(ctx)
        exercise_not_assignment(catalog, values["assignment"])
        catalog.assignment(values["assignment"])

    recipe, wheel = recipe_installing(Path(out_dir), install, **values)
    if wheel:
        click.echo(f"wrote {wheel}")
    return recipe


def _ci_export(
    name: str,
    summary: str,
    writer: Callable[[], Callable[..., Path]],
    own_options: Sequence[Callable[[Callable[..., Any]], Callable[..., Any]]] = (),
) -> None:
    """Register ``grader export NAME``: the CI options in, one file written by ``writer()`` out.

    ``writer`` returns the write function when called, so its module is imported only when the
    command runs. ``own_options`` are this template's alone; their values go to the write function
    as keyword arguments.
    """

    @export_group.command(name, help=summary)
    @_ci_options
    @exercises_option
    @click.pass_context
    @guard
    def export_ci(
        ctx: click.Context,
        out_dir: str,
        install: str | None,
        assignment: str,
        submission: str,
        specs: str,
        min_score: float,
        public_only: bool,
        python_version: str,
        **own: Any,
    ) -> None:
        recipe = _ci_recipe(
            ctx,
            out_dir,
            install,
            assignment=assignment,
            submission=submission,
            specs=specs,
            min_score=min_score,
            public_only=public_only,
            python=python_version,
        )
        click.echo(f"wrote {writer()(Path(out_dir), recipe, **own)}")

    for option in own_options:  # on the command made above: appended, in this order, after the shared ones
        option(export_ci)


def _github_actions_writer() -> Callable[..., Path]:
    from grader.export.github_actions import write_github_actions

    return write_github_actions


def _gitlab_ci_writer() -> Callable[..., Path]:
    from grader.export.gitlab_ci import write_gitlab_ci

    return write_gitlab_ci


_ci_export(
    "github-actions",
    "Write .github/workflows/grade.yml: grade each push, annotate the files, summary and JUnit artifact, "
    "fail below --min-score.",
    _github_actions_writer,
    [
        click.option(
            "--pin-actions",
            is_flag=True,
            help="Name each action by the commit of its release (the tag in a comment), not by its major tag.",
        ),
        click.option(
            "--classroom",
            is_flag=True,
            help="Also hand the points to GitHub Classroom's grading reporter, for Classroom's grade column.",
        ),
    ],
)
_ci_export(
    "gitlab-ci",
    "Write .gitlab-ci.yml: grade each push, JUnit report and feedback artifacts, fail below --min-score.",
    _gitlab_ci_writer,
)


@export_group.command("gradescope")
@click.option(
    "--assignment",
    required=True,
    shell_complete=complete_assignment_ids,
    help="The assignment the autograder grades ('all' for everything).",
)
@click.option(
    "--out",
    "out_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="The zip to write (upload it as the autograder).",
)
@click.option(
    "--allow-weak-sandbox",
    is_flag=True,
    help="Written into run_autograder: grade hidden checks even where the sandbox is below tier A "
    "(Gradescope's kernel may lack Landlock); without it such a machine grades nothing.",
)
@exercises_option
@click.pass_context
@guard
def export_gradescope(ctx: click.Context, assignment: str, out_file: str, allow_weak_sandbox: bool) -> None:
    """Write a Gradescope autograder zip: setup.sh, run_autograder, the grader wheel, specs and solutions."""
    from grader.errors import UsageError
    from grader.export.gradescope_bundle import gradescope_bundle

    if not out_file.endswith(".zip"):
        raise UsageError(f"{out_file}: the autograder is a zip file; give a name ending in .zip")
    catalog = load_specs(ctx)
    exercise_not_assignment(catalog, assignment)
    write_atomically(Path(out_file), gradescope_bundle(catalog, assignment, allow_weak_sandbox=allow_weak_sandbox))
    click.echo(
        f"wrote {out_file}: the autograder for {assignment}, with its hidden checks and solutions; "
        "keep it with the instructors"
    )


def _write_build_folder(out_dir: str, built: dict[str, bytes]) -> Path:
    """Write a Docker build folder's files under ``out_dir`` (made if missing); scripts get mode 755."""
    from grader.export.images import EXECUTABLE

    root = Path(out_dir)
    for name in sorted(built):
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, built[name])
        if name in EXECUTABLE:
            target.chmod(0o755)
    return root


@export_group.command("prairielearn")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@exercises_option
@click.pass_context
@guard
def export_prairielearn(ctx: click.Context, out_dir: str) -> None:
    """Write DIR, the build folder of a PrairieLearn grader image: the grader's wheel, pinned dependencies,
    the entrypoint; no spec and no solution (the course's serverFilesCourse holds those). Specs at hand
    (--exercises, GRADER_EXERCISES, ./exercises) are loaded first, so the image is never one they fail on."""
    from grader.export.images import prairielearn_image

    if ctx.obj["exercises_dir"] or Path(os.environ.get("GRADER_EXERCISES") or "exercises").is_dir():
        load_specs(ctx)
    root = _write_build_folder(out_dir, prairielearn_image())
    click.echo(f"wrote {root}: build it with 'docker build --platform linux/amd64 -t COURSE/grader {root}'")


@export_group.command("exercism")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False))
@exercises_option
@click.pass_context
@guard
def export_exercism(ctx: click.Context, out_dir: str) -> None:
    """Write DIR, an Exercism test-runner (Dockerfile, bin/run.sh) grading the specs' implementation exercises;
    the image is public, so every check must be public (export from the handout's public-checks)."""
    from grader.export.images import exercism_runner

    root = _write_build_folder(out_dir, exercism_runner(load_specs(ctx)))
    click.echo(
        f"wrote {root}: build it with 'docker build --platform linux/amd64 -t exercism/TRACK-test-runner {root}'"
    )
