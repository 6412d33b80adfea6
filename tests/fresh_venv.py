"""A fresh virtual environment that pip can install the grader into without the network, for export tests."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from grader.export.wheel import build_wheel

__all__ = ["fresh_venv_env"]

_DEPENDENCIES = ("rich", "markdown-it-py", "mdurl", "pygments", "click", "pyyaml", "pydantic", "numpy")


def _wheelhouse(base_python: Path, folder: Path) -> None:
    """Wheels of the grader's pure-Python dependencies the base interpreter lacks, so pip needs no network."""
    for name in _DEPENDENCIES:
        probe = subprocess.run(
            [str(base_python), "-c", f"import importlib.metadata as m; m.version({name!r})"],
            capture_output=True,
            timeout=60,
        )
        if probe.returncode == 0:
            continue
        dist = importlib.metadata.distribution(name)
        packages = sorted(
            {
                f.parts[0]
                for f in dist.files or []
                if len(f.parts) > 1 and f.suffix == ".py" and not f.parts[0].endswith((".dist-info", ".data"))
            }
        )
        try:
            build_wheel(folder, name, packages)
        except Exception as exc:  # noqa: BLE001 - a compiled dependency the base lacks: this machine cannot say
            pytest.skip(f"{name} is not installed for {base_python} and has no pure-Python wheel here ({exc})")


def fresh_venv_env(folder: Path) -> dict[str, str]:
    """An environment whose ``python`` is a new venv in ``folder/venv`` (seeing the base's site-packages) and
    whose pip installs only from ``folder/wheelhouse``; the grader is not installed in it."""
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    fresh = folder / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(fresh)
    _wheelhouse(base_python, folder / "wheelhouse")
    env = {
        **os.environ,
        "PATH": f"{fresh / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(folder / "wheelhouse"),
    }
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env
