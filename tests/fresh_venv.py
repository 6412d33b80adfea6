"""A fresh virtual environment that pip can install the grader into without the network, for export tests."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from grader.export.wheel import build_wheel

__all__ = ["fresh_venv_env"]

_DEPENDENCIES = ("rich", "markdown-it-py", "mdurl", "pygments", "click", "pyyaml", "pydantic", "numpy", "msgspec")


def _provide(base_python: Path, folder: Path, site_packages: Path) -> None:
    """The grader's dependencies the base interpreter lacks, so pip needs no network: a pure-Python one as a
    wheel in ``folder`` (pip installs it from there), a compiled one copied as installed into ``site_packages``
    (this machine's build of it, as the base's own NumPy is seen)."""
    for name in _DEPENDENCIES:
        probe = subprocess.run(
            [str(base_python), "-c", f"import importlib.metadata as m; m.version({name!r})"],
            capture_output=True,
            timeout=60,
        )
        if probe.returncode == 0:
            continue
        dist = importlib.metadata.distribution(name)
        installed = [f for f in dist.files or [] if "__pycache__" not in f.parts and not f.parts[0].startswith("..")]
        if any(f.suffix in (".so", ".pyd") for f in installed):
            for item in installed:
                target = site_packages / item
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(dist.locate_file(item), target)
            continue
        packages = sorted(
            {
                f.parts[0]
                for f in installed
                if len(f.parts) > 1 and f.suffix == ".py" and not f.parts[0].endswith((".dist-info", ".data"))
            }
        )
        try:
            build_wheel(folder, name, packages)
        except Exception as exc:  # noqa: BLE001 - this machine cannot say why
            pytest.skip(f"{name} is not installed for {base_python} and no wheel of it could be made here ({exc})")


def fresh_venv_env(folder: Path) -> dict[str, str]:
    """An environment whose ``python`` is a new venv in ``folder/venv`` (seeing the base's site-packages, with
    the grader's compiled dependencies the base lacks copied in) and whose pip installs only from
    ``folder/wheelhouse``; the grader is not installed in it."""
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    fresh = folder / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(fresh)
    site_packages = fresh / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    _provide(base_python, folder / "wheelhouse", site_packages)
    env = {
        **os.environ,
        "PATH": f"{fresh / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(folder / "wheelhouse"),
    }
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env
