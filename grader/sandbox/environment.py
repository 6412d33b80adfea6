"""The environment a learner process starts with: nothing of the grader's but what numpy needs to run.

Shared by the warm parent (confined learner processes) and the fallback
runner (plain ones, on machines without the kernel's layers), so both start
learner code from the same few variables.
"""

from __future__ import annotations

import os

__all__ = ["learner_environment"]

# One thread per learner process: the grader runs several at once, and BLAS threads would fight over cores.
_FIXED = {
    "LANG": "C.UTF-8",
    "HOME": "/nonexistent",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
}


def learner_environment(path: str, passed_on: tuple[str, ...]) -> dict[str, str]:
    """The fixed variables, ``PATH`` set to ``path``, and those of ``passed_on`` the grader itself has."""
    env = {"PATH": path, **_FIXED}
    for name in passed_on:
        if name in os.environ:
            env[name] = os.environ[name]
    return env
