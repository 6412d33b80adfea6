"""``grader export prairielearn DIR`` and ``grader export exercism DIR``: a Docker build folder, from the installed
grader alone (no source tree: the platform files are package data, the grader travels as its wheel).

After ``prairielearn`` (the question's ``info.json`` names ``/opt/grader-pl/entrypoint.sh``)::

    Dockerfile          FROM --platform=linux/amd64 python:X.Y-slim (this Python's version)
    requirements.txt    the grader's dependencies, each at the version installed here (grader.export.pins)
    grader.txt          the grader's wheel and its sha256, installed with pip --require-hashes
    wheels/grader-VERSION-py3-none-any.whl
    entrypoint.sh, finish_results.py

After ``exercism``, Exercism's test-runner layout (``Dockerfile`` at the root,
``/opt/test-runner/bin/run.sh SLUG INPUT_DIR OUTPUT_DIR``)::

    Dockerfile, requirements.txt, grader.txt, wheels/   as above
    bin/run.sh, bin/finish_results.py
    specs/exercises/    the implementation exercises' specs; specs/...: the files they name

The PrairieLearn image holds no spec: the course's ``serverFilesCourse``
does. An Exercism runner image is public, so every exercise it holds must
have public checks only and name no reference or known-wrong solution;
anything else is refused before a file is written. Entries are bytes by
name; ``grader.cli`` writes them (``EXECUTABLE`` ones with mode 755).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

from grader.errors import UsageError
from grader.export.pins import pinned_requirements
from grader.export.wheel import build_wheel
from grader.spec.files import spec_files
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import ImplementationExercise

__all__ = ["EXECUTABLE", "exercism_runner", "prairielearn_image"]

EXECUTABLE = frozenset({"entrypoint.sh", "bin/run.sh"})
_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def prairielearn_image() -> dict[str, bytes]:
    """The build folder of the PrairieLearn external-grader image, by file name."""
    found = _platform("prairielearn")
    built = {name: found[name] for name in ("entrypoint.sh", "finish_results.py")}
    return {**built, **_installed_grader(found["Dockerfile"], "/opt/grader-pl/wheels")}


def exercism_runner(catalog: Catalog) -> dict[str, bytes]:
    """The build folder of an Exercism test-runner image grading ``catalog``'s implementation exercises."""
    found = _platform("exercism")
    built = {"bin/run.sh": found["run.sh"], "bin/finish_results.py": found["finish_results.py"]}
    built.update(_public_specs(catalog))
    return {**built, **_installed_grader(found["Dockerfile"], "/opt/test-runner/wheels")}


def _platform(name: str) -> dict[str, bytes]:
    """The package data of one platform (``grader/export/platforms/NAME/``), by file name."""
    folder = files("grader.export").joinpath("platforms").joinpath(name)
    return {entry.name: entry.read_bytes() for entry in folder.iterdir() if entry.is_file()}


def _installed_grader(dockerfile: bytes, wheels: str) -> dict[str, bytes]:
    """The Dockerfile for this Python, the pins, and the grader's wheel with the line installing it by hash."""
    with tempfile.TemporaryDirectory(prefix="grader-image-") as scratch:
        wheel = build_wheel(Path(scratch))
        data = wheel.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    return {
        "Dockerfile": dockerfile.replace(b"@PYTHON@", _PYTHON.encode("ascii")),
        "requirements.txt": pinned_requirements().encode("utf-8"),
        "grader.txt": f"{wheels}/{wheel.name} --hash=sha256:{digest}\n".encode(),
        f"wheels/{wheel.name}": data,
    }


def _public_specs(catalog: Catalog) -> dict[str, bytes]:
    """``specs/``: each implementation exercise's spec and the files it names, refused if any is not public."""
    root = catalog.root.resolve()
    chosen: dict[str, bytes] = {}
    exercises = [e for e in catalog.exercises.values() if isinstance(e, ImplementationExercise)]
    if not exercises:
        raise UsageError(f"{root}: no implementation exercise to put into the Exercism runner")
    for exercise in exercises:
        source = catalog.sources[exercise.id]
        hidden = [check.id for check in exercise.checks if check.visibility != "public"]
        solutions = [exercise.reference_solution, *(wrong.path for wrong in exercise.known_wrong)]
        if hidden or any(solutions):
            listed = ", ".join(hidden[:3]) + (f" and {len(hidden) - 3} more" if len(hidden) > 3 else "")
            what = f"hidden checks ({listed})" if hidden else "a reference or known-wrong solution"
            raise UsageError(
                f"{source}: {exercise.id} has {what}, and an Exercism runner image is public; export from "
                "the handout's public checks instead ('grader release --out H', then "
                "'grader --exercises H/public-checks export exercism DIR')"
            )
        chosen[f"specs/exercises/{source.name}"] = source.read_bytes()
        for file in spec_files(exercise):
            path = catalog.resolve(file.relative)
            if not path.is_relative_to(root):
                raise UsageError(f"{source}: {file.relative!r} is outside {root}; move it under that folder")
            chosen[f"specs/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    _check_loads(chosen)
    return chosen


def _check_loads(chosen: dict[str, bytes]) -> None:
    """Unpack ``specs/`` and load it, as the runner will: a runner whose specs cannot load is never written."""
    with tempfile.TemporaryDirectory(prefix="grader-image-") as scratch:
        for name, data in chosen.items():
            target = Path(scratch) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        load_catalog(Path(scratch) / "specs" / "exercises")
