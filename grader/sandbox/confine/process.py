"""Confining a process: the layers a learner process (and the self-test's probe) applies to itself.

Run in the forked process, before any code of the learner's: capabilities,
Landlock (from the allow-list the warm parent opened ahead), the descriptors
of that allow-list closed, resource limits, then the seccomp filter.
Standard library only (with ctypes): the warm parent's start-up self-test
runs it before numpy is imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from grader.sandbox.confine import landlock, privileges, seccomp

__all__ = ["apply_layers"]


def apply_layers(config: dict[str, Any]) -> dict[str, Any]:
    """Apply every layer the parent asked for; report what held and what failed."""
    wanted = config.get("layers", {})
    held: dict[str, Any] = {}
    steps: list[tuple[str, Callable[[], Any]]] = []
    if wanted.get("caps", True):
        steps.append(("caps_dropped", privileges.drop_capabilities))
    # The warm parent's allow-list arrives as a ruleset it built for this scratch folder
    # (``landlock_ruleset``: descriptor and ABI), or as open descriptors of its paths
    # (``landlock.Opened``). Either is closed once this process is confined, before the limit on open
    # files and before any code of the learner's: a rule added to the ruleset would reach later processes.
    paths = config.get("landlock_paths") or {}
    ruleset = config.get("landlock_ruleset")
    if ruleset is not None and not wanted.get("landlock", True):  # (the warm parent builds none then)
        os.close(int(ruleset[0]))
        ruleset = None
    if ruleset is not None:
        steps.append(("landlock_abi", lambda: _confine_with(ruleset)))
    elif wanted.get("landlock", True):
        steps.append(
            (
                "landlock_abi",
                lambda: landlock.restrict(
                    list(paths.get("read", [])) + [config["scratch"]],
                    ["/dev/null"],
                    list_paths=list(paths.get("list", [])),
                ),
            )
        )
    steps.append(
        (
            "landlock_paths_closed",
            _held(lambda: landlock.close_ahead(item for items in paths.values() for item in items)),
        )
    )
    limits = config.get("limits")
    if limits:
        steps.append(("rlimits", _held(lambda: privileges.set_limits(**limits))))
    if wanted.get("seccomp", True):
        # Without Landlock nothing else stops writes: the filter then also denies every way of changing files.
        steps.append(("seccomp", _held(lambda: seccomp.install_filter(read_only_fs=not held.get("landlock_abi")))))
    for name, step in steps:
        try:
            held[name] = step()
        except Exception as exc:
            held[name] = False
            held.setdefault("errors", {})[name] = f"{exc.__class__.__name__}: {exc}"
    return held


def _held(action: Callable[[], None]) -> Callable[[], bool]:
    """A step for an action that returns nothing: it held when it ran without raising."""

    def step() -> bool:
        action()
        return True

    return step


def _confine_with(ruleset: list[int]) -> int:
    """Enforce the warm parent's ruleset, and close it whatever happens."""
    fd, abi = int(ruleset[0]), int(ruleset[1])
    try:
        return landlock.restrict_with(fd, abi)
    finally:
        os.close(fd)
