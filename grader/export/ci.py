"""What a CI job for a learner's repository runs, shared by the GitHub Actions and GitLab CI templates.

A learner's repository is usually the handout (``grader release``) with the
learner's work in it: its ``public-checks/`` folder holds the specs reduced
to their public checks, since everything in that repository is readable by
the learner. So the job grades with ``--public`` by default; ``--all-checks``
is for a private repository that holds the full specs.

The job grades twice, never judging in between: once to JUnit with
``--min-score`` (its exit status is kept, not acted on), once to Markdown for
the summary; the publishing steps run whatever the score, and the last step
fails the job when the first run said the score was below the minimum. Exit
statuses 2 and 3 (a broken setup, not a low score) fail the step at once.

Every parameter reaches the shell through an environment variable, quoted
where it is used, so no value can change the commands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import UsageError
from grader.export.wheel import build_wheel, wheel_name

__all__ = ["CiRecipe", "RESULTS_DIR", "WHEEL_DIR", "recipe_installing", "write_text", "yaml_string"]

RESULTS_DIR = "grader-results"
WHEEL_DIR = ".grader"
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")


@dataclass(frozen=True)
class CiRecipe:
    """The parameters a template writes: which assignment, which files, how the grader is installed.

    ``install`` is a pip requirement (``grader==0.1.0``, a ``git+https://``
    URL, a wheel's path in the repository); the export writes the grader's own
    wheel under ``.grader/`` when none is given.
    """

    assignment: str
    install: str
    submission: str = "."
    specs: str = "public-checks"
    min_score: float = 1.0
    public_only: bool = True
    python: str = "3.11"

    def __post_init__(self) -> None:
        if not _ID.match(self.assignment):
            raise UsageError(f"--assignment {self.assignment!r} is not an id (lower-case words joined by hyphens)")
        if not 0 <= self.min_score <= 1:
            raise UsageError(f"--min-score {self.min_score:g} is not a fraction between 0 and 1")
        if not _PYTHON.match(self.python):
            raise UsageError(f"--python {self.python!r} is not a Python version like 3.11")
        for option, value in (("--install", self.install), ("--submission", self.submission), ("--specs", self.specs)):
            if not value.strip() or any(ord(ch) < 32 for ch in value) or "${{" in value or "$[[" in value:
                raise UsageError(f"{option} {value!r} must be one line of plain text")

    def variables(self) -> dict[str, str]:
        """The job's environment: one place to edit the recipe after export."""
        return {
            "GRADER_INSTALL": self.install,
            "GRADER_ASSIGNMENT": self.assignment,
            "GRADER_SUBMISSION": self.submission,
            "GRADER_SPECS": self.specs,
            "GRADER_MIN_SCORE": f"{self.min_score:g}",
        }

    def grade(self, format_name: str, *, output: str | None = None, min_score: bool = False) -> str:
        """The shell command that grades the submission once, in ``format_name``."""
        words = ['grader --exercises "$GRADER_SPECS" grade "$GRADER_SUBMISSION"', '--assignment "$GRADER_ASSIGNMENT"']
        if self.public_only:
            words.append("--public")
        words.append(f"--format {format_name}")
        if output:
            words.append(f"--output {output}")
        if min_score:
            words.append('--min-score "$GRADER_MIN_SCORE"')
        return " ".join(words)


def recipe_installing(out: Path, install: str | None, **values: Any) -> tuple[CiRecipe, Path | None]:
    """The recipe, and the wheel written for it: without ``install``, the grader's own, under ``out/.grader/``."""
    if install is not None:
        return CiRecipe(install=install, **values), None
    recipe = CiRecipe(install=f"{WHEEL_DIR}/{wheel_name()}", **values)  # bad values refused before any write
    return recipe, build_wheel(out / WHEEL_DIR)


def yaml_string(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
