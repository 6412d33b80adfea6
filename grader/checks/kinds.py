"""Argument kinds: what an entry's ``args:`` promise for each parameter, kept by every value a check computes.

A spec gives every parameter a kind (``float_array``, ``int_array``,
``bool_array``, ``number_array``, ``float``, ``int``, ``bool``, ``callable``,
``any``). Values written in YAML become that kind in ``cases.convert_argument``;
values a check computes from a case (``-x`` and ``x + c`` in a relation, a
literal such as ``0.0``) become it here, since arithmetic on a 0-d array gives
a NumPy scalar, which would reach the learner's process as a Python number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.sandbox.calls import TrustedFunction

__all__ = ["ARRAY_KINDS", "coerce_argument", "keeps_kind"]

# The dtype kinds (numpy's ``dtype.kind`` letters) each array kind admits.
ARRAY_KINDS = {"float_array": "f", "int_array": "iu", "bool_array": "b", "number_array": "iuf"}


def coerce_argument(value: Any, kind: str) -> Any:
    """A value a check computed (``-x``, ``x + c``, a literal) as the kind of argument the entry was promised.

    Arithmetic on a 0-d array gives a NumPy scalar, which reaches the learner's
    process as a Python number; an entry promised a float array must get a
    0-d array instead, and an entry promised an int an int. A float array
    keeps its precision (float32 stays float32). ``ValueError`` when the value
    cannot be that kind without changing it (2.5 for an int).
    """
    if value is None or isinstance(value, TrustedFunction):
        return value
    if kind in ARRAY_KINDS:
        array = np.asarray(value)
        if array.dtype.kind in ARRAY_KINDS[kind]:
            return array
        if kind == "float_array" and array.dtype.kind in "biu":
            return array.astype(float)
        if kind in ("int_array", "number_array") and array.dtype.kind in "bf" and np.all(array == np.round(array)):
            return array.astype(np.int64)
        raise ValueError(f"{_shown_kind(array)} cannot be passed as {kind}")
    if kind in ("float", "int", "bool"):
        number = np.asarray(value)
        if number.ndim or number.dtype.kind not in "biuf":
            raise ValueError(f"{_shown_kind(number)} cannot be passed as {kind}")
        if kind == "float":
            return float(number)
        if kind == "bool":
            if number.dtype.kind != "b":
                raise ValueError(f"{_shown_kind(number)} cannot be passed as bool")
            return bool(number)
        if number != np.round(number):
            raise ValueError(f"{number.item()!r} cannot be passed as int")
        return int(number)
    if isinstance(value, (list, tuple)):
        return np.asarray(value, dtype=float)
    if isinstance(value, np.generic):  # a NumPy scalar would arrive as a Python number
        return np.asarray(value)
    return value


def keeps_kind(value: Any, kind: str, optional: bool = False) -> bool:
    """Whether ``value`` is exactly what an argument of ``kind`` promises (``None`` only where ``optional``)."""
    if value is None:
        return optional
    if kind in ARRAY_KINDS:
        return type(value) is np.ndarray and value.dtype.kind in ARRAY_KINDS[kind]
    if kind == "float":  # a NumPy float is sent as a Python float
        return isinstance(value, (float, np.floating))
    if kind == "int":
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if kind == "bool":
        return isinstance(value, (bool, np.bool_))
    if kind == "callable":
        return isinstance(value, TrustedFunction)
    return True


def _shown_kind(array: np.ndarray) -> str:
    return f"a {array.ndim}-d array of {array.dtype}" if array.ndim else f"the {array.dtype} {array.item()!r}"
