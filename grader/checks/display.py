"""How values and calls are written in reasons: short, exact enough to reproduce, deterministic."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, SupportsFloat

import numpy as np

from grader.sandbox.calls import TrustedFunction

__all__ = ["format_call", "format_number", "format_value", "values_not_shown"]

UNSHOWN = "…"
_state = threading.local()  # a batch may grade on several threads


@contextmanager
def values_not_shown() -> Iterator[None]:
    """Within it, ``format_value`` writes every array as ``UNSHOWN``: for findings that are counted, never shown.

    A check fails on many inputs; the reason shows the first (the
    smallest) and counts the rest; writing out arrays is the slowest part
    of judging, so the rest are never written.
    """
    before = getattr(_state, "quiet", False)
    _state.quiet = True
    try:
        yield
    finally:
        _state.quiet = before


def format_number(value: SupportsFloat) -> str:
    """A float the way a person reads it: ``1e-09``, ``0.5``, ``nan``, ``inf``."""
    return f"{float(value):.6g}"


def format_value(value: Any) -> str:
    """An array as ``array([...])`` (summarised past a dozen entries), a tuple item by item."""
    if isinstance(value, tuple):
        inner = ", ".join(format_value(item) for item in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, np.ndarray):
        if getattr(_state, "quiet", False):
            return UNSHOWN
        if value.ndim == 0:
            return format_number(value) if value.dtype.kind in "fc" else repr(value.item())
        with np.printoptions(precision=6, threshold=12, edgeitems=3, linewidth=100, floatmode="maxprec"):
            text = np.array2string(value, separator=", ")
        text = " ".join(text.split()).replace("[ ", "[").replace(" ]", "]")
        suffix = "" if value.dtype == np.float64 or value.dtype == np.bool_ else f", dtype={value.dtype}"
        return f"array({text}{suffix})"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, TrustedFunction):
        return value.name if not value.arrays else f"{value.name}(A={format_value(value.arrays[0])})"
    return repr(value)


def format_call(function: str, args: dict[str, Any]) -> str:
    """``softmax(z=array([1000., 1001.]), axis=-1)``: the call, with named arguments.

    A 0-d array is written as one (``x=array(0.)``), so it is not read as the number the entry was
    handed: code that works for a Python float may fail for it, and the other way round.
    """
    inner = ", ".join(f"{name}={_argument_text(value)}" for name, value in args.items())
    return f"{function}({inner})"


def _argument_text(value: Any) -> str:
    if not isinstance(value, np.ndarray) or value.ndim or getattr(_state, "quiet", False):
        return format_value(value)
    with np.printoptions(precision=6, floatmode="maxprec"):
        text = np.array2string(value)
    suffix = "" if value.dtype == np.float64 or value.dtype == np.bool_ else f", dtype={value.dtype}"
    return f"array({text}{suffix})"
