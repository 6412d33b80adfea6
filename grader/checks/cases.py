"""Deterministic inputs for checks: named examples first, then seeded random cases.

A case set in a spec is a list of generators. ``examples`` are written out
by hand (the edge cases a lesson cares about); ``random`` draws ``count``
cases from a seeded generator. Random cases are sorted simplest first
(fewest elements, then smallest magnitude), so the first failing case is
also the smallest one found. The seed comes from the exercise and case-set
ids, so the same spec always gives the same inputs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np

from grader.record import ConfigDict, Field, Record
from grader.sandbox.calls import TrustedFunction

__all__ = [
    "ArrayDraw",
    "Case",
    "CaseGenerator",
    "ExamplesGenerator",
    "RandomGenerator",
    "build_cases",
    "stable_seed",
]


class _Strict(Record):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ArrayDraw(_Strict):
    """How to draw one array argument: a shape (sizes or dimension names) and a scale."""

    shape: list[list[int | str]] = Field(
        min_length=1, description="candidate shapes; entries are sizes or names from `dims`"
    )
    scale: list[float] = Field(default=[1.0], min_length=1, description="candidate standard deviations")
    dtype: Literal["float64", "float32", "int64", "bool"] = "float64"
    high: int | str | None = Field(default=None, description="for int64: exclusive upper bound (a size or a dim name)")
    p_true: float = Field(default=0.7, ge=0, le=1, description="for bool: probability of True")
    keep_one_per_row: bool = Field(default=True, description="for bool: every row keeps at least one True")
    offset: list[float] = Field(default=[0.0], min_length=1, description="candidate constants added to every entry")


class RandomSpec(_Strict):
    count: int = Field(gt=0, le=500)
    dims: dict[str, list[int]] = Field(default_factory=dict, description="named sizes shared between arguments")
    args: dict[str, ArrayDraw | list[Any]] = Field(description="an ArrayDraw, or a list of values to choose from")
    axis_of: str | None = Field(default=None, description="argument whose ndim an `axis` argument must fit")


class ExamplesGenerator(_Strict):
    examples: list[dict[str, Any]] = Field(min_length=1)
    label: str | None = None


class RandomGenerator(_Strict):
    random: RandomSpec


CaseGenerator = Annotated[ExamplesGenerator | RandomGenerator, Field(union_mode="left_to_right")]


@dataclass
class Case:
    """One set of arguments for an entry function, in signature order."""

    args: dict[str, Any]
    origin: str = "example"
    label: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def size(self) -> tuple[int, float]:
        """Simplicity key: total number of elements, then largest magnitude (computed once)."""
        cached = self.extra.get("_size")
        if cached is not None:
            return cached
        total, magnitude = 0, 0.0
        for value in self.args.values():
            if isinstance(value, np.ndarray):
                total += value.size
                finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
                if finite.size:
                    magnitude = max(magnitude, float(np.max(np.abs(finite.astype(float)))))
        self.extra["_size"] = (total, magnitude)
        return total, magnitude


def stable_seed(*parts: str) -> int:
    """A seed that depends only on the given strings (never on Python's hash salt)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def convert_argument(value: Any, kind: str) -> Any:
    """Turn a YAML value into what the entry function receives, by its declared kind."""
    if value is None:
        return None
    if kind == "float_array":
        return np.asarray(value, dtype=float)
    if kind == "int_array":
        return np.asarray(value, dtype=np.int64)
    if kind == "number_array":
        array = np.asarray(value)
        return array if array.dtype.kind in "iuf" else np.asarray(value, dtype=float)
    if kind == "bool_array":
        return np.asarray(value, dtype=bool)
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "callable":
        return trusted_function(value)
    return value


def trusted_function(value: Any) -> Any:
    """A YAML reference to a function of the exercise's given file.

    ``softmax`` names one; ``{function: linear, A: MATRIX, b: VECTOR}`` also
    fixes keyword arguments (arrays), so the learner's code receives
    ``partial(linear, A=..., b=...)``.
    """
    if isinstance(value, str):
        return TrustedFunction(value)
    if isinstance(value, dict) and isinstance(value.get("function"), str):
        bound = tuple(
            (str(name), np.asarray(array, dtype=float)) for name, array in value.items() if name != "function"
        )
        return TrustedFunction(value["function"], bound)
    raise ValueError(f"not a function reference: {value!r}")


def build_cases(generators: list[Any], arg_kinds: Mapping[str, str], seed_parts: tuple[str, ...]) -> list[Case]:
    """Every case of a case set: examples as written, then random cases simplest first."""
    cases: list[Case] = []
    for number, generator in enumerate(generators):
        if isinstance(generator, ExamplesGenerator):
            for example in generator.examples:
                args = {
                    name: convert_argument(example[name], arg_kinds.get(name, "any"))
                    for name in arg_kinds
                    if name in example
                }
                cases.append(Case(args=args, origin="example", label=generator.label))
        else:
            rng = np.random.default_rng(stable_seed(*seed_parts, str(number)))
            tries = [_draw_case(generator.random, arg_kinds, rng) for _ in range(generator.random.count)]
            drawn = [case for case in tries if case is not None]
            drawn.sort(key=Case.size)
            cases.extend(drawn)
    return cases


def _draw_case(spec: RandomSpec, arg_kinds: Mapping[str, str], rng: np.random.Generator) -> Case | None:
    dims = {name: int(rng.choice(sizes)) for name, sizes in spec.dims.items()}
    args: dict[str, Any] = {}
    for name in arg_kinds:
        if name not in spec.args:
            continue
        how = spec.args[name]
        if isinstance(how, ArrayDraw):
            args[name] = _draw_array(how, dims, rng)
        else:
            args[name] = convert_argument(how[int(rng.integers(len(how)))], arg_kinds[name])
    if spec.axis_of and "axis" in args and args["axis"] is not None:
        ndim = np.ndim(args[spec.axis_of])
        if not -ndim <= int(args["axis"]) < ndim:
            args["axis"] = int(rng.integers(-ndim, ndim)) if ndim else None
    return Case(args=args, origin="random")


def _draw_array(how: ArrayDraw, dims: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    template = how.shape[int(rng.integers(len(how.shape)))]
    shape = tuple(dims[d] if isinstance(d, str) else int(d) for d in template)
    if how.dtype == "bool":
        mask = rng.random(shape) < how.p_true
        if how.keep_one_per_row and mask.ndim >= 1 and mask.shape[-1] > 0:
            rows = mask.reshape(-1, mask.shape[-1])
            for row in rows:
                if not row.any():
                    row[int(rng.integers(row.size))] = True
            mask = rows.reshape(shape)
        return mask
    if how.dtype == "int64":
        high = dims[how.high] if isinstance(how.high, str) else (how.high or 10)
        return rng.integers(0, high, size=shape, dtype=np.int64)
    scale = how.scale[int(rng.integers(len(how.scale)))]
    offset = how.offset[int(rng.integers(len(how.offset)))]
    values = rng.standard_normal(shape) * scale + offset
    return values.astype(np.float32) if how.dtype == "float32" else values
