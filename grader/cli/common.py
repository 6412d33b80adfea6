"""What the command modules share: the error-to-status guard, ``--exercises``, loading specs, writing outputs.

Only the command line imports this module; it maps the grader's errors to
exit statuses (2 bad usage or an invalid spec, 3 the grader itself failed).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = [
    "EXERCISES_HELP",
    "STDIN",
    "STDIN_KINDS",
    "STDOUT",
    "check_sandbox_layers",
    "exercise_not_assignment",
    "exercises_option",
    "fail",
    "guard",
    "learner_option",
    "load_specs",
    "variant_secret_option",
    "write_atomically",
]

# '-' as a path: standard input for PATH, standard output for --output (grader.cli.stdin spools the input).
STDIN = STDOUT = "-"
# What --stdin-as names: the suffix the file on standard input would have had.
STDIN_KINDS = ("py", "ipynb", "yaml", "json")

EXERCISES_HELP = "Directory of exercise specs [default: ./exercises; env GRADER_EXERCISES]."


def fail(message: str, code: int) -> None:
    """Print ``grader: error: MESSAGE`` on stderr, as one inert line, and leave with ``code``.

    The message may quote a learner's file name or text: it is kept to one
    line a CI runner does not obey (``grader.report.runner_safe``).
    """
    from grader.report.runner_safe import inert_line

    click.echo(f"grader: error: {inert_line(message)}", err=True)
    sys.exit(code)


def guard(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the grader's own errors into exit statuses 2 or 3 with a one-line reason."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from grader.errors import GraderError

        try:
            return function(*args, **kwargs)
        except GraderError as error:
            fail(str(error), error.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception:  # a bug of ours: say so, keep the traceback for the report
            click.echo(
                "grader: internal error: the grader itself failed; this is not the submission's fault.\n"
                "Please report it with the command you ran and the traceback below.",
                err=True,
            )
            import traceback

            from grader.report._common import printable
            from grader.report.runner_safe import inert_lines

            click.echo(inert_lines(printable(traceback.format_exc())), err=True)  # it may quote learner text
            sys.exit(3)

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


def exercises_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--exercises`` after the command's name as well (``grader grade FILE --exercises DIR``); it wins."""

    def remember(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.ensure_object(dict)["exercises_dir"] = value

    return click.option(
        "--exercises",
        type=click.Path(file_okay=False),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=remember,
        help=EXERCISES_HELP,
    )(command)


def variant_secret_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--variant-secret FILE``: the file holding the course's secret that draws learners' variants.

    It is handed on as ``GRADER_VARIANT_SECRET_FILE`` (``engine.variants``), so a batch's workers read it too.
    """

    def remember(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            from grader.engine.variants import SECRET_FILE_ENV

            os.environ[SECRET_FILE_ENV] = value

    return click.option(
        "--variant-secret",
        type=click.Path(dir_okay=False),
        default=None,
        expose_value=False,
        callback=remember,
        metavar="FILE",
        help="File holding the course's secret that draws each learner's variant of exercises with params "
        "[env GRADER_VARIANT_SECRET_FILE, or the secret itself in GRADER_VARIANT_SECRET].",
    )(command)


def learner_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--learner NAME``: whose variant of exercises with params (the learner's id, as batch names them)."""
    return click.option(
        "--learner",
        default=None,
        metavar="NAME",
        help="The learner's id (their folder name in a batch): their own variant of exercises with params.",
    )(command)


def exercise_not_assignment(catalog: Any, assignment: str, *, hint: str = "") -> None:
    """Refuse an exercise id given as ``--assignment``, saying what the option takes."""
    from grader.errors import UsageError
    from grader.spec.loader import ALL

    if assignment != ALL and assignment not in catalog.assignments and assignment in catalog.exercises:
        known = ", ".join([*catalog.assignments, ALL])
        raise UsageError(
            f"{assignment!r} is an exercise, not an assignment; {hint}--assignment takes an assignment id: {known}"
        )


def load_specs(ctx: click.Context) -> Any:
    """The catalog of the specs the command was pointed at (``--exercises``, ``GRADER_EXERCISES``, ``./exercises``)."""
    from grader.spec.loader import load_catalog

    return load_catalog(ctx.obj["exercises_dir"])


def write_atomically(path: Path, content: str | bytes) -> None:
    """Write through a temporary file in the same folder, then rename: never a half-written report.

    The file gets the mode a shell's ``>`` would give it: an existing file
    keeps its own, a new one ``0o666`` less the umask (not the temporary
    file's private ``0o600``).
    """
    from grader.errors import UsageError

    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"{path}: the folder {str(directory)!r} does not exist")
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it; set back at once, before any file is made
    os.umask(mask)
    return mask


def check_sandbox_layers() -> None:
    """A bad ``GRADER_SANDBOX_LAYERS`` is bad usage (exit 2), said before any learner process starts."""
    from grader.errors import SandboxError, UsageError
    from grader.sandbox.runner import Layers

    try:
        Layers.from_environment()
    except SandboxError as error:
        raise UsageError(str(error)) from None
