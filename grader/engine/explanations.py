"""Explanations derived from the data: the one simple relation that turns the expected values into the learner's.

``explain`` is given the (got, expected) values of every failing case of one
check, with the check's tolerance, and states the first relation of
``relations.RELATIONS`` (a factor, a shift, a transposition, float32
rounding, the right values in a list, right except at a few positions...)
that holds on EVERY pair. It states none for data that cannot tell
relations apart (every value zero, a single value that a factor and a shift
both fit, NaN or inf anywhere), because a false explanation misleads more
than none. It knows nothing of any exercise: the caller names the output and
the parameters and constants worth naming; it imports only numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from msgspec import Struct

from grader.engine.relations import RELATIONS, Ambiguous, Found, Pair, Tolerance

__all__ = ["Explanation", "explain", "named_values"]

_MIN_RTOL = 1e-12  # a learner's own arithmetic differs from the fitted relation by a few ulps
_MAX_ELEMENTS = 1_000_000
# Constants a wrong value is often off by (a logarithm in another base), named for every case.
_CONSTANTS = {"log 2": math.log(2.0), "log 10": math.log(10.0)}


class Explanation(Struct, frozen=True):
    """A relation that holds on every failing case: ``code`` is stable (for reports and tests), ``relation`` the
    phrase after the subject ("are the expected ones times T (2 here)"), ``sentence`` the whole sentence."""

    code: str
    relation: str
    sentence: str


def explain(
    pairs: Sequence[tuple[Any, Any]],
    *,
    rtol: float,
    atol: float,
    named: Mapping[str, float] | Sequence[Mapping[str, float]] | None = None,
    output: str | None = None,
) -> Explanation | None:
    """The one relation between got and expected that holds on every pair, or ``None`` when none does.

    ``pairs``: (got, expected) of every failing case of one check; ``rtol``, ``atol``: its tolerance;
    ``named``: the parameters and constants worth naming, one mapping for every case or one per case;
    ``output``: what the values are called ("weights"; default "values", or "value" for a number).
    """
    cases = _prepare(pairs, named)
    if cases is None:
        return None
    tol = Tolerance(max(float(rtol), _MIN_RTOL), max(float(atol), 0.0))
    if any(tol.close(c.got, c.expected) and c.got_kind == c.expected_kind for c in cases):
        return None  # a case whose values match: what failed it is not in the values
    for relation in RELATIONS:
        with np.errstate(all="ignore"):  # a map that overflows simply does not fit
            found = relation(cases, tol)
        if isinstance(found, Ambiguous):
            return None
        if found is not None:
            return _phrase(found, cases, output)
    return None


def named_values(args: Mapping[str, Any]) -> dict[str, float]:
    """The values of a call worth naming in an explanation, by the names a learner reads in the call.

    Each number argument (``T``) and its square root; each length above 1 of an array argument
    (``Q.shape[1]``) and its square root; the size of an array of several axes (``logits.size``); and
    constants such as ``log 2``. Squares and reciprocals are tried by ``explain`` itself.
    """
    named: dict[str, float] = {}
    for name, value in args.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value):
            named[name] = float(value)
            if value > 0:
                named[f"sqrt({name})"] = math.sqrt(value)
        elif isinstance(value, np.ndarray) and value.ndim >= 1:
            for axis, length in enumerate(value.shape):
                if length > 1:
                    named[f"{name}.shape[{axis}]"] = float(length)
                    named[f"sqrt({name}.shape[{axis}])"] = math.sqrt(length)
            if value.ndim > 1:
                named[f"{name}.size"] = float(value.size)
    return {**named, **_CONSTANTS}


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return "array"
    return "number"


def _prepare(
    pairs: Sequence[tuple[Any, Any]], named: Mapping[str, float] | Sequence[Mapping[str, float]] | None
) -> list[Pair] | None:
    """Pairs as float64 arrays with their names, or ``None`` for data no relation can be read from."""
    if not pairs:
        return None
    if named is None or isinstance(named, Mapping):
        per_case: Sequence[Mapping[str, float]] = [named or {}] * len(pairs)
    else:
        per_case = named
        if len(per_case) != len(pairs):
            raise ValueError(f"named has {len(per_case)} mappings for {len(pairs)} pairs")
    cases = []
    for (got, expected), names in zip(pairs, per_case, strict=True):
        arrays = []
        for value in (got, expected):
            try:
                array = np.asarray(value)
            except (ValueError, TypeError):
                return None  # ragged or unconvertible: no value to compare
            if array.dtype.kind not in "iuf" or array.size == 0 or array.size > _MAX_ELEMENTS:
                return None
            array = array.astype(np.float64)
            if not np.all(np.isfinite(array)) or not np.any(array):
                return None
            arrays.append(array)
        usable = {
            k: float(v)
            for k, v in names.items()
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v)
        }
        cases.append(Pair(arrays[0], arrays[1], _kind(got), _kind(expected), usable))
    return cases


def _phrase(found: Found, cases: list[Pair], output: str | None) -> Explanation:
    one = all(c.expected.size == 1 and c.expected_kind == "number" for c in cases)
    words = (
        {"are": "is", "ones": "one", "values": "value", "s": ""}
        if one
        else {"are": "are", "ones": "ones", "values": "values", "s": "s"}
    )
    relation = found.phrase.format(**words)
    if output and not one and not output.endswith("s"):
        subject = f"the entries of your {output}"  # "your Jacobian are" would not read; "your weights are" does
    else:
        subject = f"your {output or words['values']}"
    body = f"{subject} {relation}"
    if found.prefixed:
        lead = "on every failing input" if len(cases) > 1 else "on the failing input"
        body = f"{lead}, {body}"
    return Explanation(found.code, relation, body[0].upper() + body[1:] + ".")
