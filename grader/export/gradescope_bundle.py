"""``grader export gradescope``: an autograder bundle (the zip Gradescope asks an instructor for).

Layout of the zip (Gradescope unzips it into ``/autograder/source``)::

    setup.sh            makes /autograder/venv, a venv apart from the image's Python, and installs into it
                        requirements.txt, then the grader wheel by its sha256 (written into setup.sh)
    requirements.txt    the grader's dependencies, each at the version installed here (grader.export.pins)
    run_autograder      grades /autograder/submission into /autograder/results/results.json
    collect_submission.py  gathers the submission's files from its folders too (a zip holding a folder,
                        a repository's src/), so the grader's entry rule chooses among them
    finish_results.py   adds execution_time (the run's measured seconds); on any failure, a valid result
                        telling the learner to contact the instructor
    wheels/grader-VERSION-py3-none-any.whl
    exercises/          the assignment's spec and its exercises' specs, hidden checks included
    solutions/...       the reference and known-wrong solutions they name, at the same paths

The bundle is for the instructor and Gradescope only: it holds hidden checks
and solutions. Entries are sorted with fixed timestamps, so the same catalog
and grader give the same bytes. Before it is written, the copied specs are
loaded as a catalog, so a bundle that cannot load is never produced.
"""

from __future__ import annotations

import hashlib
import io
import sys
import tempfile
import zipfile
from importlib.resources import files as package_files
from pathlib import Path

from grader.errors import UsageError
from grader.export.gradescope_scripts import FINISH_RESULTS, run_autograder, setup_sh
from grader.export.pins import pinned_requirements
from grader.export.wheel import build_wheel
from grader.spec.files import spec_files
from grader.spec.loader import Catalog, load_catalog

__all__ = ["bundle_files", "gradescope_bundle"]

_EPOCH = (1980, 1, 1, 0, 0, 0)
_EXECUTABLE = {"setup.sh", "run_autograder"}


def gradescope_bundle(catalog: Catalog, assignment: str, *, allow_weak_sandbox: bool = False) -> bytes:
    """The bundle for ``assignment``, as the bytes of a zip file."""
    with tempfile.TemporaryDirectory(prefix="grader-bundle-") as scratch:
        wheel = build_wheel(Path(scratch) / "wheels")
        files = bundle_files(catalog, assignment, allow_weak_sandbox=allow_weak_sandbox)
        data = wheel.read_bytes()
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        files["setup.sh"] = setup_sh(wheel.name, hashlib.sha256(data).hexdigest(), python).encode("utf-8")
        files[f"wheels/{wheel.name}"] = data
        _check_loads(files, assignment, Path(scratch) / "check")
    return _zip(files)


def bundle_files(catalog: Catalog, assignment: str, *, allow_weak_sandbox: bool = False) -> dict[str, bytes]:
    """Every file of the bundle but the wheel and setup.sh (which names the wheel's sha256): scripts, pins,
    specs and solutions, by name in the zip."""
    exercises = catalog.assignment(assignment)  # a usage error naming the known assignments, if unknown
    collector = package_files("grader.export").joinpath("platforms").joinpath("gradescope")
    files: dict[str, bytes] = {
        "run_autograder": run_autograder(assignment, allow_weak_sandbox=allow_weak_sandbox).encode("utf-8"),
        "finish_results.py": FINISH_RESULTS.encode("utf-8"),
        "collect_submission.py": collector.joinpath("collect_submission.py").read_bytes(),
        "requirements.txt": pinned_requirements().encode("utf-8"),
    }
    specs = [catalog.sources[exercise.id] for exercise in exercises]
    if assignment in catalog.assignments:
        specs.append(catalog.sources[assignment])
    for path in specs:
        files[f"exercises/{path.name}"] = path.read_bytes()
    for exercise in exercises:
        for named in spec_files(exercise):  # solutions, functions, reference answers: all the spec names
            files[_inside(catalog, exercise.id, named.relative)] = catalog.resolve(named.relative).read_bytes()
    return files


def _inside(catalog: Catalog, exercise_id: str, relative: str) -> str:
    """``relative`` as a name in the zip; refused when it leaves the folder that holds exercises/."""
    root = catalog.root.resolve()
    path = catalog.resolve(relative)
    if not path.is_relative_to(root):
        raise UsageError(
            f"{catalog.sources[exercise_id]}: solution {relative!r} is outside {root}, so the bundle "
            "cannot keep its path; move it under that folder"
        )
    return path.relative_to(root).as_posix()


def _check_loads(files: dict[str, bytes], assignment: str, folder: Path) -> None:
    """Unpack the specs and solutions and load them, as run_autograder will."""
    for name, data in files.items():
        if "/" in name and not name.startswith("wheels/"):
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    load_catalog(folder / "exercises").assignment(assignment)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.external_attr = (0o755 if name in _EXECUTABLE else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, files[name])
    return buffer.getvalue()
