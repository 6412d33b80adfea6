"""Comparing arrays of numbers, as checks do: one shape, NaN never close; and telling when there was nothing to judge.

``np.all``, ``np.allclose`` and ``all()`` are true of an empty array, and a
relation that counts NaN as equal to NaN holds on an output that is NaN
throughout: a property judged on no numbers holds for nothing, so it must
not earn a point. ``nothing_judged`` says when that is so, and what came back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["close", "nothing_judged"]


def close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``np.allclose`` for arrays of one shape (NaN never close), without its per-call overhead.

    An infinite expected value is matched only by the same infinity: ``rtol * inf`` would let any
    finite number pass. Two empty arrays are close: a caller whose arrays may both be the learner's
    asks ``nothing_judged`` first.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.all((a == b) | (np.isfinite(b) & (np.abs(a - b) <= atol + rtol * np.abs(b)))))


def nothing_judged(values: Iterable[np.ndarray], args: Mapping[str, Any], *, nan_counts: bool = False) -> str | None:
    """What came back, when a property of ``values`` (a learner's results) would be judged on no numbers at all.

    ``args``: the call's arguments. Every value empty, while no argument is empty: "came back empty".
    With ``nan_counts`` (the property treats NaN as matching NaN): every entry NaN, while every argument
    is a finite number, so no correct answer is NaN there: "every entry is NaN". ``None``: something was judged.
    """
    arrays = [np.asarray(value) for value in values]
    empty_input = any(isinstance(v, np.ndarray) and v.size == 0 for v in args.values())
    if all(array.size == 0 for array in arrays) and not empty_input:
        return "came back empty"
    if nan_counts and arrays and _all_nan(arrays) and _finite_inputs(args):
        return "came back with every entry NaN, for inputs that are all finite numbers"
    return None


def _all_nan(arrays: list[np.ndarray]) -> bool:
    return all(array.dtype.kind in "fc" and array.size and bool(np.all(np.isnan(array))) for array in arrays)


def _finite_inputs(args: Mapping[str, Any]) -> bool:
    """Whether every numeric argument is finite throughout (a function given by the grader counts as finite)."""
    for value in args.values():
        if isinstance(value, (bool, np.bool_)) or value is None:
            continue
        if isinstance(value, (int, float, np.number, np.ndarray)):
            array = np.asarray(value)
            if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
                return False
    return True
