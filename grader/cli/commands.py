"""The ``grader`` command: parse, call the Python API, format, set the exit status.

Exit statuses: 0 every graded check passed (or ``--min-score`` was reached);
1 it did not; 2 bad usage, an unreadable file or an invalid spec; 3 the
grader itself failed. Only this module maps errors to statuses, and heavy
imports happen inside the commands so ``grader --help`` stays instant.
"""

from __future__ import annotations

import os
import sys

# The grader's own arrays are small: a BLAS thread pool would only spin on the other core, beside the
# warm parent and the learner processes. Set before anything imports numpy; a user's own setting wins.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")


def command_named(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names, skipping the group's own options; ``None`` when it names none."""
    words = iter(argv[1:])
    for word in words:
        if word == "--exercises":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def kernel_may_confine() -> bool:
    """Whether the warm parent is worth starting before anything else: Linux, not told to play a machine without
    kernel layers. ``sandbox.parents`` decides for good, once the command runs."""
    pretend = os.environ.get("GRADER_PRETEND_NO_KERNEL_LAYERS", "").strip()  # kernel_layers.PRETEND_NO_KERNEL_LAYERS
    return sys.platform == "linux" and pretend in ("", "0")


def started_as_the_program(argv: list[str], orig_argv: list[str]) -> bool:
    """Whether this process is the ``grader`` command itself: its script, or ``python -m grader.cli``.

    Under ``-m`` the package is imported while ``argv[0]`` is still ``"-m"``, so the
    interpreter's own command line (``sys.orig_argv``) is what tells.
    """
    if argv and os.path.basename(argv[0]) == "grader":
        return True
    asked = list(zip(orig_argv, orig_argv[1:], strict=False))  # each word and the next
    return ("-m", "grader.cli") in asked or "-mgrader.cli" in orig_argv


if (
    (__name__ == "__main__" or started_as_the_program(sys.argv, getattr(sys, "orig_argv", [])))
    and command_named(sys.argv) == "grade"
    and not {"--help", "-h"} & set(sys.argv)
    and kernel_may_confine()
):  # the program itself, about to grade: boot the warm parent now
    from grader.sandbox.warm_parent import start_early

    start_early()

import atexit
import threading
from pathlib import Path
from typing import Any

import click

from grader import __version__
from grader.cli.common import (
    EXERCISES_HELP,
    STDIN,
    STDIN_KINDS,
    STDOUT,
    check_sandbox_layers,
    exercise_not_assignment,
    exercises_option,
    guard,
    learner_option,
    load_specs,
    variant_secret_option,
    write_atomically,
)
from grader.cli.completion import complete_assignment_ids, complete_exercise_ids
from grader.cli.lazy import LazyCommands

__all__ = ["main", "run"]

FORMAT_NAMES = ["text", "json", "junit", "gradescope", "markdown", "exercism", "prairielearn"]
FORMAT_NAMES += ["github", "github-classroom"]  # workflow commands; the result GitHub Classroom's reporter reads


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from grader.sandbox.kernel_layers import kernel_layers_missing

    missing = kernel_layers_missing()
    if missing is not None:
        click.echo(f"grader {__version__}")
        click.echo(f"sandbox: none ({missing}); only public checks run here, unsandboxed (grader grade FILE --public)")
        ctx.exit(0)
    from grader.sandbox.confine import landlock, seccomp

    abi = landlock.abi_version()
    has_seccomp = seccomp.available()
    tier = "A" if abi and has_seccomp else "B" if has_seccomp else "C"
    click.echo(f"grader {__version__}")
    running_as = "root: capabilities are dropped in learner processes" if os.geteuid() == 0 else "a user"
    click.echo(
        f"sandbox: tier {tier} (landlock_abi {abi}, seccomp {'yes' if has_seccomp else 'no'}, running as {running_as})"
    )
    ctx.exit(0)


# The instructor's commands: their modules are imported only when a command line names one (or asks for help).
_INSTRUCTOR_COMMANDS = {
    "batch": "grader.cli.batch:batch_command",
    "batch-mistake": "grader.cli.mistakes:batch_mistake_command",
    "export": "grader.cli.export:export_group",
    "new": "grader.cli.authoring:new_command",
    "release": "grader.cli.authoring:release_command",
}


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, commands=LazyCommands(_INSTRUCTOR_COMMANDS))
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version and the sandbox tier this machine allows.",
)
@click.option(
    "--exercises",
    "exercises_dir",
    type=click.Path(file_okay=False),
    envvar="GRADER_EXERCISES",
    default=None,
    help=EXERCISES_HELP,
)
@click.pass_context
def main(ctx: click.Context, exercises_dir: str | None) -> None:
    """Auto-graded softmax exercises: property checks in a sandbox, with a reason for every result."""
    ctx.obj = {"exercises_dir": exercises_dir}


@main.command("list")
@exercises_option
@click.pass_context
@guard
def list_command(ctx: click.Context) -> None:
    """List every exercise and assignment: id, kind, points, title."""
    from grader.spec.listing import cached_rows, catalog_rows, store_rows

    rows = cached_rows(ctx.obj["exercises_dir"])  # unchanged specs: no pydantic, no numpy
    if rows is None:
        catalog = load_specs(ctx)
        rows = catalog_rows(catalog)
        store_rows(ctx.obj["exercises_dir"], catalog, rows)
    widths = [max(len(row[i]) for row in rows + [("id", "kind", "points", "")]) for i in range(3)]
    click.echo(f"{'id':<{widths[0]}}  {'kind':<{widths[1]}}  {'points':>{widths[2]}}  title")
    for row in rows:
        click.echo(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}")


@main.command("show")
@click.argument("exercise_id", shell_complete=complete_exercise_ids)
@learner_option
@variant_secret_option
@exercises_option
@click.pass_context
@guard
def show_command(ctx: click.Context, exercise_id: str, learner: str | None = None) -> None:
    """Show what a learner sees of an exercise (never hidden checks or answers); --learner: their variant."""
    from grader.authoring.handout import describe_exercise, describe_variant

    exercise = load_specs(ctx).exercise(exercise_id)
    text = describe_exercise(exercise) if learner is None else describe_variant(exercise, learner)
    click.echo(text, nl=False)


@main.command("schema")
@exercises_option
@guard
def schema_command() -> None:
    """Print the JSON Schema (draft 2020-12) of exercise specs, for editors and validators."""
    import json

    from grader.spec.schema import spec_schema

    click.echo(json.dumps(spec_schema(), indent=2, sort_keys=True))


@main.command("validate")
@click.option(
    "--exercise",
    "exercise_ids",
    multiple=True,
    shell_complete=complete_exercise_ids,
    help="Self-test only this exercise (repeatable).",
)
@variant_secret_option
@exercises_option
@click.pass_context
@guard
def validate_command(ctx: click.Context, exercise_ids: tuple[str, ...]) -> None:
    """Self-test every spec: references pass every check, known-wrong solutions fail theirs."""
    from grader.authoring.validate import validate_catalog

    check_sandbox_layers()

    report = validate_catalog(
        load_specs(ctx), exercise_ids=exercise_ids, on_line=lambda line: click.echo(line.render())
    )
    click.echo(report.summary())
    sys.exit(0 if report.ok else 1)


@main.command("grade")
@click.argument("path", type=click.Path())
@click.option(
    "--exercise",
    "exercise_ids",
    multiple=True,
    shell_complete=complete_exercise_ids,
    help="Grade this exercise (repeatable).",
)
@click.option(
    "--assignment",
    default=None,
    shell_complete=complete_assignment_ids,
    help="Grade every exercise of this assignment ('all' for everything).",
)
@click.option("--format", "format_name", type=click.Choice(FORMAT_NAMES), default="text", show_default=True)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the report here instead of stdout ('-' for stdout).",
)
@click.option(
    "--stdin-as",
    "stdin_kind",
    type=click.Choice(STDIN_KINDS),
    default=None,
    help="With PATH '-' (standard input): the kind of file it holds [default: a notebook if it is JSON with "
    "cells, an answers file if it is JSON or YAML answers, else py].",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit 0 when the score reaches this fraction of the maximum.",
)
@click.option("--public", "public_only", is_flag=True, help="Run only the public checks (a learner's self-check).")
@click.option(
    "--allow-weak-sandbox",
    is_flag=True,
    help="Grade hidden checks even where the sandbox is below tier A or failed its self-test "
    "(every result then carries a warning).",
)
@learner_option
@variant_secret_option
@exercises_option
@click.pass_context
@guard
def grade_command(
    ctx: click.Context,
    path: str,
    exercise_ids: tuple[str, ...],
    assignment: str | None,
    format_name: str,
    output: str | None,
    min_score: float | None,
    public_only: bool,
    allow_weak_sandbox: bool = False,
    learner: str | None = None,
    stdin_kind: str | None = None,
) -> None:
    """Grade one submission: a .py file, a notebook, an answers file, a directory of them, or '-' (stdin)."""
    from grader.errors import SubmissionError, UsageError

    if path != STDIN and not Path(path).exists():
        raise SubmissionError(f"{path}: no such file or directory")
    if stdin_kind is not None and path != STDIN:
        raise UsageError(f"--stdin-as is for PATH '-' (standard input), not {path!r}")
    check_sandbox_layers()
    from grader.cli.stdin import submission_path

    # '-' is standard input, spooled to a private file for as long as it is graded; the report names it '-'
    with submission_path(path, stdin_kind) as (path, label):
        from grader.sandbox.parents import start_parent

        # The warm parent, booting on the other core while the specs load; the fallback runner where the kernel has
        # no layers, for public checks only (it refuses the rest).
        warm_parent = start_parent(public_only=public_only, format_name=format_name)
        try:
            from grader.grading import GradingSession
            from grader.report import render

            only = exercise_ids if exercise_ids and not assignment else ()
            with GradingSession(
                exercises_dir=ctx.obj["exercises_dir"],
                warm_parent=warm_parent,
                only=only,
                allow_weak_sandbox=True if allow_weak_sandbox else None,
            ) as session:
                if assignment:
                    exercise_not_assignment(
                        session.catalog, assignment, hint=f"grade it with --exercise {assignment}; "
                    )
                report = session.grade(
                    path,
                    exercise_ids=exercise_ids,
                    assignment=assignment,
                    public_only=public_only,
                    label=label,
                    learner=learner,
                )
            text = render(report, format_name, catalog=session.catalog)
        finally:
            warm_parent.close(wait=False)  # it ends by itself; this command has nothing left to ask of it
        if output and output != STDOUT:
            write_atomically(Path(output), text)
        else:
            click.echo(text, nl=False)
        if min_score is not None:
            passed = report.max_score > 0 and report.score >= min_score * report.max_score - 1e-9
        else:
            passed = report.all_passed
        sys.exit(0 if passed else 1)


def run() -> None:
    """Entry point of the ``grader`` program: :func:`main`, then leave without tearing the interpreter down.

    Freeing every module of numpy and pydantic one by one at exit is a
    large share of a cold ``grader grade``, and nothing of it matters: output is
    flushed and exit handlers (temporary files, coverage) still run. Whenever
    another thread is still alive, the ordinary exit joins it instead.
    """
    try:
        main()
        code: Any = 0
    except SystemExit as exit_:
        code = exit_.code
    _leave(code)


def _leave(code: Any) -> None:
    if threading.active_count() > 1:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as sys.exit does: a message goes to stderr and the status is 1
        from grader.report.runner_safe import inert_line

        print(inert_line(str(code)), file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``grader ... | head``): the reader wanted no more
            status = status or 1
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
