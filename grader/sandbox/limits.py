"""The limits a learner process runs under, and which kernel layers confine it.

``Limits`` are what the grader enforces (wall clock per call and for the
import, CPU seconds, memory, file size, open files, printed output);
``Layers`` choose the kernel layers (capabilities, Landlock, seccomp) the
child applies to itself (``sandbox.confine``).
"""

from __future__ import annotations

import os
from typing import Any

from msgspec import Struct, field

from grader.errors import SandboxError

__all__ = ["Layers", "Limits"]


def _seconds_from_environment(name: str, default: float) -> float:
    """A test-only override of a time limit (``GRADER_CALL_SECONDS`` ...), when it is a positive number."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value <= 600 else default


class Limits(Struct, frozen=True):
    """Resource limits of one learner process.

    The time limits' defaults can be overridden for tests that wait for
    timeouts, through hidden variables: ``GRADER_CALL_SECONDS`` (wall clock per
    call; it also replaces each exercise's own ``time_limit``),
    ``GRADER_IMPORT_SECONDS`` (wall clock for the import) and
    ``GRADER_CPU_SECONDS`` (CPU time per process).
    """

    call_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_CALL_SECONDS", 2.0))
    import_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_IMPORT_SECONDS", 5.0))
    cpu_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_CPU_SECONDS", 20.0))
    memory_bytes: int = 512 << 20
    file_bytes: int = 1 << 20
    open_files: int = 64
    output_keep: int = 8 << 10
    output_cap: int = 1 << 20

    def child_limits(self) -> dict[str, Any]:
        return {
            "cpu_seconds": self.cpu_seconds,
            "memory_bytes": self.memory_bytes,
            "file_bytes": self.file_bytes,
            "open_files": self.open_files,
        }

    @staticmethod
    def call_seconds_for(exercise_limit: float) -> float:
        """The wall clock per call for an exercise: its own limit, unless ``GRADER_CALL_SECONDS`` overrides it."""
        return _seconds_from_environment("GRADER_CALL_SECONDS", exercise_limit)


class Layers(Struct, frozen=True):
    """Which kernel layers to apply; ``GRADER_SANDBOX_LAYERS`` switches them for tests."""

    caps: bool = True
    landlock: bool = True
    seccomp: bool = True

    @classmethod
    def from_environment(cls) -> Layers:
        """Read ``GRADER_SANDBOX_LAYERS``: ``all`` (default), ``none``, or a comma list."""
        value = os.environ.get("GRADER_SANDBOX_LAYERS", "all").strip().lower()
        if value in ("", "all"):
            return cls()
        chosen = {part.strip() for part in value.split(",")} - {"none", ""}
        unknown = chosen - {"caps", "landlock", "seccomp"}
        if unknown:
            raise SandboxError(
                f"GRADER_SANDBOX_LAYERS names unknown layers {sorted(unknown)}; "
                "use all, none, or a comma list of caps, landlock, seccomp."
            )
        return cls(caps="caps" in chosen, landlock="landlock" in chosen, seccomp="seccomp" in chosen)
