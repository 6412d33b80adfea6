"""An installed pure-Python distribution as a wheel: how the grader travels to Gradescope and CI.

The wheel is assembled from what is installed here: the distribution's own
metadata (``METADATA``, ``entry_points.txt``) and its packages' files as the
import system finds them. For an editable install (``pip install -e .``)
those are the working tree's files; for a regular install, site-packages'.
No build backend runs and nothing is downloaded, so it works on an
instructor's laptop as it is. The result is deterministic: sorted entries,
fixed timestamps, so the same files give the same bytes.

It refuses (``UsageError``, exit 2) when the distribution is not installed
(a checkout run with ``PYTHONPATH``: install it first) or holds compiled
extensions, which a ``py3-none-any`` wheel must not.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

from grader.errors import UsageError

__all__ = ["build_wheel", "wheel_name"]

_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can hold: no build time in the bytes
_COMPILED = {".so", ".pyd", ".dylib", ".dll"}
_WHEEL = "Wheel-Version: 1.0\nGenerator: grader export\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def wheel_name(distribution: str = "grader") -> str:
    """The file name :func:`build_wheel` gives the installed ``distribution``'s wheel."""
    return f"{_normal(distribution)}-{_distribution(distribution).version}-py3-none-any.whl"


def build_wheel(out_dir: Path, distribution: str = "grader", packages: Sequence[str] = ("grader",)) -> Path:
    """Write the installed ``distribution`` (import packages ``packages``) as a wheel into ``out_dir``."""
    dist = _distribution(distribution)
    files: dict[str, bytes] = {}
    for package in packages:
        files.update(_package_files(distribution, package))
    info = f"{_normal(distribution)}-{dist.version}.dist-info"
    metadata = dist.read_text("METADATA") or dist.read_text("PKG-INFO")  # PKG-INFO: an .egg-info folder
    if not metadata:
        raise UsageError(f"cannot build a wheel of {distribution}: its installed metadata has no METADATA file")
    files[f"{info}/METADATA"] = metadata.encode("utf-8")
    files[f"{info}/WHEEL"] = _WHEEL.encode("utf-8")
    entry_points = dist.read_text("entry_points.txt")
    if entry_points:
        files[f"{info}/entry_points.txt"] = entry_points.encode("utf-8")
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in sorted(files.items())]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode("utf-8")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel_name(distribution)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in [*sorted(n for n in files if not n.endswith("/RECORD")), f"{info}/RECORD"]:
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, files[name])
    return target


def _distribution(name: str) -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise UsageError(
            f"cannot build a wheel of {name}: it is not installed as a package here; install it "
            "from its source folder with 'pip install .' (or 'pip install -e .'), then run this "
            "again"
        ) from None


def _package_files(distribution: str, package: str) -> dict[str, bytes]:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"cannot build a wheel of {distribution}: its package {package!r} is not importable here")
    files: dict[str, bytes] = {}
    for location in spec.submodule_search_locations:
        root = Path(location)
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (
                not path.is_file()
                or "__pycache__" in relative.parts
                or path.suffix in (".pyc", ".pyo")
                or any(part.startswith(".") for part in relative.parts)
            ):  # editor and OS droppings
                continue
            if path.suffix in _COMPILED:
                raise UsageError(
                    f"cannot build a wheel of {distribution}: {path} is compiled code, and the "
                    "wheel is for any platform"
                )
            files[f"{package}/{relative.as_posix()}"] = path.read_bytes()
    return files


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
