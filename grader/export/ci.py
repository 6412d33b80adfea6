"""What a CI job for a learner's repository runs, shared by the GitHub Actions and GitLab CI templates.

A learner's repository is usually the handout (``grader release``) with the
learner's work in it: its ``public-checks/`` folder holds the specs reduced
to their public checks, since everything in that repository is readable by
the learner. So the job grades with ``--public`` by default; ``--all-checks``
is for a private repository that holds the full specs.

The job is feedback for the learner, never the grade of record: the learner
can change anything in the repository, the workflow file included. What the
export does guarantee is that nothing else in the checkout can stand in for
the grader (``install_commands`` and ``CiRecipe.grade`` say how):

- pip runs as ``python -I -m pip`` from a fresh folder outside the checkout,
  so a ``pip/`` folder, a ``sitecustomize.py``, a ``pip.conf``, a
  ``setup.cfg`` or a ``pyproject.toml`` in the checkout is never read;
- a wheel in the repository is copied out of it and installed only if its
  sha256 is the one written into the job at export (``--require-hashes``);
  any other ``--install`` names an index or a URL the instructor controls;
- the grader runs as ``python -I -m grader.cli``: isolated mode keeps the
  working directory, ``PYTHONPATH`` and the user's site folder off
  ``sys.path``, so a ``grader/`` or ``numpy/`` folder in the checkout cannot
  shadow the installed packages. The grader reads the learner's files; it
  imports nothing from them.

The job grades twice, never judging in between: once to JUnit with
``--min-score`` (its exit status is kept, not acted on), once to Markdown for
the summary; the publishing steps run whatever the score, and the last step
fails the job when the first run said the score was below the minimum. Exit
statuses 2 and 3 (a broken setup, not a low score) fail the step at once.

Every parameter reaches the shell through an environment variable, quoted
where it is used, so no value can change the commands.

``handout_hashes`` and ``handout_check`` tell a handout nobody has written in
yet from work begun, by the same rules on both sides (the export's Python and
the job's shell), so the job can say "not started" instead of failing stubs.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from grader.errors import UsageError
from grader.export.wheel import build_wheel, wheel_name

__all__ = [
    "FEEDBACK_NOTE",
    "HANDOUT_HASHES",
    "NOT_STARTED",
    "CiRecipe",
    "RESULTS_DIR",
    "WHEEL_DIR",
    "handout_check",
    "handout_hashes",
    "install_commands",
    "recipe_installing",
    "write_text",
    "yaml_string",
]

RESULTS_DIR = "grader-results"
WHEEL_DIR = ".grader"
# What the learner reads under the job's feedback: the job is not where the grade comes from.
FEEDBACK_NOTE = (
    "This check is feedback on the work in this repository, which its owner can change, so it is not "
    "a grade: your grade comes from the grader run by your instructor on the work you hand in."
)
# The sha256 of each file a learner writes in, as the handout has it: while they all still match, the work has
# not started, and the job says so instead of grading the handout's stubs (which only raise) as failures.
HANDOUT_HASHES = f"{WHEEL_DIR}/handout.sha256"
NOT_STARTED = (
    "Not started: the files are still the handout's, so nothing was graded. Write your work in them and push "
    "to get feedback."
)
# What a learner writes in: code, notebooks and answers files (grader.submission.files reads these).
_WORK_SUFFIXES = (".py", ".ipynb", ".yaml", ".yml", ".json")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# A requirement pip resolves from a package index: a name, extras, version specifiers; no path.
_FROM_INDEX = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\s*(\[[A-Za-z0-9._,\s-]*\])?\s*([<>=!~][^/\\@]*)?$")
# A requirement pip fetches from a URL: ``git+https://...``, ``https://...whl``, ``name @ https://...``.
_FROM_URL = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*@\s*)?(git\+)?(https|http|ssh)://\S+$")
_ARCHIVES = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


@dataclass(frozen=True)
class CiRecipe:
    """The parameters a template writes: which assignment, which files, how the grader is installed.

    ``install`` is a pip requirement from an index (``grader==0.1.0``) or a
    URL (``git+https://...``), or a wheel's path in the repository; a wheel
    comes with ``wheel_sha256``, the only bytes the job will install from it.
    The export writes the grader's own wheel under ``.grader/`` when no
    ``install`` is given.
    """

    assignment: str
    install: str
    submission: str = "."
    specs: str = "public-checks"
    min_score: float = 1.0
    public_only: bool = True
    python: str = "3.11"
    wheel_sha256: str | None = None

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
        if self.wheel_sha256 is not None and not _SHA256.match(self.wheel_sha256):
            raise UsageError(f"the wheel's sha256 {self.wheel_sha256!r} is not 64 hexadecimal digits")
        if self.wheel_sha256 is None and install_source(self.install) == "repository":
            raise UsageError(
                f"--install {self.install!r} is a file in the learner's repository, which the learner can "
                "swap; give a wheel under --out (its sha256 is then written into the job) or a requirement "
                "from a package index or URL"
            )

    def variables(self) -> dict[str, str]:
        """The job's environment: one place to edit the recipe after export."""
        variables = {
            "GRADER_INSTALL": self.install,
            "GRADER_ASSIGNMENT": self.assignment,
            "GRADER_SUBMISSION": self.submission,
            "GRADER_SPECS": self.specs,
            "GRADER_MIN_SCORE": f"{self.min_score:g}",
        }
        if self.wheel_sha256:
            variables["GRADER_WHEEL_SHA256"] = self.wheel_sha256
        return variables

    def grade(self, format_name: str, *, output: str | None = None, min_score: bool = False) -> str:
        """The shell command that grades the submission once, in ``format_name``.

        Isolated mode (``-I``) keeps the checkout off ``sys.path``, so only the installed grader and
        its installed dependencies are imported, whatever folders the repository holds.
        """
        words = [
            'python -I -m grader.cli --exercises "$GRADER_SPECS" grade "$GRADER_SUBMISSION"',
            '--assignment "$GRADER_ASSIGNMENT"',
        ]
        if self.public_only:
            words.append("--public")
        words.append(f"--format {format_name}")
        if output:
            words.append(f"--output {output}")
        if min_score:
            words.append('--min-score "$GRADER_MIN_SCORE"')
        return " ".join(words)


def install_source(install: str) -> str:
    """Where ``install`` comes from: ``index``, ``url`` or ``repository`` (a path, in the checkout)."""
    if _FROM_URL.match(install):
        return "url"
    if _FROM_INDEX.match(install) and not install.lower().endswith(_ARCHIVES):
        return "index"
    return "repository"


def install_commands(recipe: CiRecipe) -> list[str]:
    """Shell lines that install the grader, run from the checkout's root, leaving the working directory there.

    pip runs in isolated mode from a fresh folder outside the checkout, so no file in the checkout
    is on its ``sys.path`` or read as its configuration or as a project. A wheel from the repository
    is copied out first, so the bytes whose hash pip checks are the bytes it installs; its
    dependencies are then resolved from the index, as for any requirement.
    """
    lines = ['GRADER_HOME="$(mktemp -d)"']
    if recipe.wheel_sha256:
        lines += [
            'wheel="$GRADER_HOME/$(basename -- "$GRADER_INSTALL")"',
            'cp -- "$GRADER_INSTALL" "$wheel"',
            'printf \'%s --hash=sha256:%s\\n\' "$wheel" "$GRADER_WHEEL_SHA256" > "$GRADER_HOME/grader.txt"',
            'cd "$GRADER_HOME"',
            'python -I -m pip install --no-input --no-deps --require-hashes -r "$GRADER_HOME/grader.txt"',
            'python -I -m pip install --no-input "$wheel"',
        ]
    else:
        lines += ['cd "$GRADER_HOME"', 'python -I -m pip install --no-input "$GRADER_INSTALL"']
    lines += ["cd - > /dev/null", "python -I -m grader.cli --version"]
    return lines


def recipe_installing(out: Path, install: str | None, **values: Any) -> tuple[CiRecipe, Path | None]:
    """The recipe, and the wheel written for it: without ``install``, the grader's own, under ``out/.grader/``.

    A wheel the repository holds is pinned by its sha256, read here from ``out``; one that is not
    there yet is refused, since the job could not tell it from a learner's.
    """
    if install is None:
        CiRecipe(install=f"{WHEEL_DIR}/{wheel_name()}", wheel_sha256="0" * 64, **values)  # refused before any write
        wheel = build_wheel(out / WHEEL_DIR)
        return CiRecipe(install=f"{WHEEL_DIR}/{wheel.name}", wheel_sha256=_sha256(wheel), **values), wheel
    if install_source(install) != "repository":
        return CiRecipe(install=install, **values), None
    relative = PurePosixPath(install)
    where = out / relative
    if relative.is_absolute() or ".." in relative.parts or not install.endswith(".whl") or not where.is_file():
        raise UsageError(
            f"--install {install!r} is a file in the learner's repository, which the learner can swap; "
            f"put the wheel under {out} first (its sha256 is then written into the job), or give a "
            "requirement from a package index or URL"
        )
    return CiRecipe(install=relative.as_posix(), wheel_sha256=_sha256(where), **values), None


def handout_hashes(out: Path, recipe: CiRecipe) -> str:
    """``sha256sum`` lines for each file the learner writes in under ``out``, as it is now (the handout).

    The files graded (``recipe.submission``) that a learner edits: code, notebooks, answers; not the specs
    folder, the job's results, hidden folders or files. Sorted by path, byte by byte, as ``sort`` in the C
    locale sorts them: the job lists the same files by the same rules (``handout_check``) and compares the
    two texts, so an edited, a new or a deleted file all count as work begun. Empty when there is no such
    file (exported before ``grader release``).
    """
    root = out / recipe.submission
    candidates = [root] if root.is_file() else [path for path in root.rglob("*") if path.is_file()]
    skipped = tuple(f"{PurePosixPath(folder)}/" for folder in (recipe.specs, RESULTS_DIR))
    found = {}
    for path in candidates:
        relative = path.relative_to(out).as_posix()
        hidden = any(part.startswith(".") for part in path.relative_to(out).parts)
        if relative.endswith(_WORK_SUFFIXES) and not hidden and not relative.startswith(skipped):
            found[relative] = path
    if any(ch in name for name in found for ch in "\n\r\\"):  # sha256sum would escape such a name: no hashes
        return ""
    return "".join(f"{_sha256(found[name])}  {name}\n" for name in sorted(found, key=lambda name: name.encode()))


def handout_check() -> list[str]:
    """Shell lines that set ``current`` to the ``sha256sum`` lines of the work files now, by ``handout_hashes``' rules.

    Run from the checkout's root; the names come from the job's ``GRADER_SUBMISSION`` and ``GRADER_SPECS``.
    """
    names = " -o ".join(f"-name '*{suffix}'" for suffix in _WORK_SUFFIXES)
    return [
        f'current="$(find "$GRADER_SUBMISSION" -type f \\( {names} \\) -not -path \'*/.*\' 2> /dev/null \\',
        "  | sed 's|^\\./||' \\",
        f'  | awk -v specs="${{GRADER_SPECS%/}}/" \'index($0, specs) != 1 && index($0, "{RESULTS_DIR}/") != 1\' \\',
        '  | LC_ALL=C sort | while IFS= read -r name; do sha256sum -- "$name"; done)"',
    ]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def yaml_string(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
