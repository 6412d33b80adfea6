"""The exact versions of what the installed grader needs, as pip requirement lines: how images and bundles pin.

A platform that installs the grader (a Docker image, Gradescope's
``setup.sh``) should install the very versions the instructor graded with
here, not whatever the index offers on the day the image is built. The pins
are read from what is installed: the grader's runtime requirements (no
extras), then theirs, each at the version installed, ``name==version``,
sorted. A requirement that is not installed here (one for another platform
or Python, behind a marker) is left out, since nothing here says which
version it would need.

Hashes are not written: the hash of a dependency's file depends on the
platform and Python it was built for (a NumPy wheel for Linux x86_64 and
CPython 3.11 is not the one installed on a Mac), and no file for the
target is at hand without the network. The grader's own wheel, which the
export writes, is installed by its sha256.
"""

from __future__ import annotations

import importlib.metadata
import re

__all__ = ["pinned_requirements", "runtime_requirements"]

# The name at the head of a requirement line: "numpy>=1.24", "pydantic[email] (>=2); python_version...".
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# A requirement wanted only with an extra of its distribution ("pytest; extra == 'test'").
_EXTRA = re.compile(r"""\bextra\s*==""")


def runtime_requirements(distribution: str) -> list[str]:
    """The names of the installed distributions ``distribution`` requires at run time, directly or not, sorted."""
    seen: dict[str, str] = {}
    todo = [distribution]
    while todo:
        name = todo.pop()
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            head, _, marker = line.partition(";")
            found = _NAME.match(head)
            if found is None or _EXTRA.search(marker):
                continue
            key = _normal(found.group(1))
            if key in seen or key == _normal(distribution):
                continue
            try:
                seen[key] = importlib.metadata.distribution(found.group(1)).metadata["Name"]
            except importlib.metadata.PackageNotFoundError:  # for another platform or Python: not needed here
                continue
            todo.append(found.group(1))
    return sorted(seen.values(), key=_normal)


def pinned_requirements(distribution: str = "grader") -> str:
    """A requirements file pinning each of ``distribution``'s run-time requirements to its installed version."""
    lines = [f"{name}=={importlib.metadata.version(name)}" for name in runtime_requirements(distribution)]
    return "".join(line + "\n" for line in lines)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
