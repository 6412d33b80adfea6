"""Which parent starts a command's learner processes: the warm parent, or where it must, the fallback runner.

The one place that decides. The warm parent's processes confine
themselves with the kernel's layers (``sandbox.confine``). Where the kernel
has none (``kernel_layers.kernel_layers_missing``: macOS, Windows, WSL 1, a Linux
with neither Landlock nor seccomp), the fallback runner
(``fallback.PlainParent``) runs a learner's own public checks in plain
processes, and nothing else: hidden checks, ``grader batch`` and the
platform formats are refused with one line (``WeakSandboxError``, exit 2),
``--allow-weak-sandbox`` or not.

Standard library only at import: the commands ask before they load numpy,
so that the warm parent starts as early as it did.
"""

from __future__ import annotations

from typing import Any

from grader.errors import WeakSandboxError

__all__ = ["LEARNER_FORMATS", "no_kernel_layers", "refuse_without_kernel_layers", "start_parent"]

# The report formats a learner reads on their own machine; the others are for platforms and CI, which grade
# for the record and so never run without the kernel's layers.
LEARNER_FORMATS = ("text", "json", "markdown")


def start_parent(*, public_only: bool, format_name: str = "text") -> Any:
    """The parent of this command's learner processes (``contracts.WarmParentLike``), started.

    The fallback runner only where the kernel has no layers, only for
    public checks (``public_only``) and only in a format a learner reads
    (``format_name`` in :data:`LEARNER_FORMATS`); anything else there raises
    ``WeakSandboxError``.
    """
    from grader.sandbox.kernel_layers import kernel_layers_missing

    missing = kernel_layers_missing()
    if missing is None:
        from grader.sandbox.warm_parent import WarmParent

        return WarmParent.start()
    if not public_only:
        raise WeakSandboxError(no_kernel_layers(missing, "hidden checks need"))
    if format_name not in LEARNER_FORMATS:
        raise WeakSandboxError(no_kernel_layers(missing, f"--format {format_name} (for grading platforms) needs"))
    from grader.sandbox.fallback import PlainParent

    return PlainParent(missing)


def refuse_without_kernel_layers(command: str) -> None:
    """Raise ``WeakSandboxError`` where the kernel has no layers: ``command`` never runs without them."""
    from grader.sandbox.kernel_layers import kernel_layers_missing

    missing = kernel_layers_missing()
    if missing is not None:
        raise WeakSandboxError(no_kernel_layers(missing, f"{command} needs"))


def no_kernel_layers(reason: str, need: str) -> str:
    """The one-line refusal: why there is no sandbox here, what needed it, and what can run instead."""
    formats = f"{', '.join(LEARNER_FORMATS[:-1])} or {LEARNER_FORMATS[-1]}"
    return (
        f"this machine cannot run the grader's sandbox ({reason}), which {need} (--allow-weak-sandbox does not "
        f"change that); only your own public checks can run here, without it: "
        f"grader grade FILE --public (--format {formats})"
    )
