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
from typing import Annotated, Any, Literal

import numpy as np
from msgspec import Struct, field

from grader.checks.scripts import ScriptsGenerator, script_case_args
from grader.record import ConfigDict, Field, Record, field_validator, model_validator
from grader.sandbox.calls import TrustedFunction

__all__ = [
    "MATRIX_FAMILIES",
    "TWIN_STEP",
    "ArrayDraw",
    "Case",
    "CaseGenerator",
    "Directions",
    "ExamplesGenerator",
    "MatrixGenerator",
    "MatrixSpec",
    "RandomGenerator",
    "build_cases",
    "matrix_of",
    "moved",
    "stable_seed",
    "stretched",
    "twin_directions",
]

# How far a near twin lies from its case, relative to each argument's size: the guard's default small move.
TWIN_STEP = 1e-3


class _Strict(Record):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ArrayDraw(_Strict):
    """How to draw one array argument: a shape (sizes or dimension names) and a scale."""

    shape: list[list[int | str]] = Field(
        min_length=1, description="candidate shapes; entries are sizes or names from `dims`"
    )
    scale: list[float] = Field(default=[1.0], min_length=1, description="candidate standard deviations")
    dtype: Literal["float64", "float32", "int64", "bool"] = Field(default="float64", description="the array's dtype")
    high: int | str | None = Field(default=None, description="for int64: exclusive upper bound (a size or a dim name)")
    p_true: float = Field(default=0.7, ge=0, le=1, description="for bool: probability of True")
    keep_one_per_row: bool = Field(default=True, description="for bool: every row keeps at least one True")
    offset: list[float] = Field(default=[0.0], min_length=1, description="candidate constants added to every entry")


class RandomSpec(_Strict):
    """Cases drawn from a seed derived from the exercise and case-set ids, sorted simplest first."""

    count: int = Field(gt=0, le=500, description="how many cases are drawn")
    dims: dict[str, list[int]] = Field(default_factory=dict, description="named sizes shared between arguments")
    args: dict[str, ArrayDraw | list[Any]] = Field(description="an ArrayDraw, or a list of values to choose from")
    axis_of: str | None = Field(default=None, description="argument whose ndim an `axis` argument must fit")


class ExamplesGenerator(_Strict):
    """Cases written out, one mapping of argument names to values each."""

    examples: list[dict[str, Any]] = Field(
        min_length=1, description="the cases: argument names and values; an argument with a default may be left out"
    )
    label: str | None = Field(default=None, description="a name for these cases, which reasons may use for an input")


class RandomGenerator(_Strict):
    """Cases drawn at random, the same on every run."""

    random: RandomSpec = Field(description="how many cases, and how each argument is drawn")


MATRIX_FAMILIES = ("hilbert", "orthogonal", "spd", "near-singular", "gaussian")
_MAX_MATRIX_SIDE = 1000


class MatrixSpec(_Strict):
    """Matrices of one family for one argument, one per size (``count`` per size for the drawn families)."""

    arg: str = Field(description="the argument that receives the matrix")
    family: Literal["hilbert", "orthogonal", "spd", "near-singular", "gaussian"] = Field(
        description="hilbert (1/(i+j+1)), orthogonal (orthonormal columns), spd (symmetric positive definite), "
        "near-singular (singular values from 1 down to 1/condition), gaussian (standard normal entries)"
    )
    sizes: list[int | list[int]] = Field(
        min_length=1, description="n for an n-by-n matrix, or [rows, columns]; at most 1000 a side"
    )
    count: int = Field(default=1, gt=0, le=100, description="matrices drawn per size (hilbert has one per size)")
    condition: float = Field(
        default=10.0, ge=1.0, le=1e16, description="spd and near-singular: the 2-norm condition number"
    )
    args: dict[str, list[Any]] = Field(
        default_factory=dict, description="the other arguments, each a list of values to choose from"
    )

    @field_validator("sizes")
    @classmethod
    def _sizes_fit(cls, value: list[int | list[int]]) -> list[int | list[int]]:
        for size in value:
            sides = [size, size] if isinstance(size, int) else size
            if len(sides) != 2 or not all(1 <= side <= _MAX_MATRIX_SIDE for side in sides):
                raise ValueError(f"a size is n or [rows, columns], each from 1 to {_MAX_MATRIX_SIDE}; got {size!r}")
        return value

    @model_validator(mode="after")
    def _spd_is_square(self) -> MatrixSpec:
        if self.family == "spd" and any(not isinstance(size, int) and size[0] != size[1] for size in self.sizes):
            raise ValueError("a symmetric positive definite matrix is square: give its sizes as n")
        return self


class MatrixGenerator(_Strict):
    """Matrices of a named family, one per size."""

    matrices: MatrixSpec = Field(description="the family, the sizes and the argument that receives them")


CaseGenerator = Annotated[
    ExamplesGenerator | RandomGenerator | MatrixGenerator | ScriptsGenerator, Field(union_mode="left_to_right")
]


class Case(Struct):
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
        elif isinstance(generator, ScriptsGenerator):  # a class entry's cases (checks.scripts)
            for steps in generator.scripts:
                args = script_case_args(steps, dict(arg_kinds), convert_argument)
                cases.append(Case(args=args, origin="example", label=generator.label))
        elif isinstance(generator, MatrixGenerator):
            rng = np.random.default_rng(stable_seed(*seed_parts, str(number)))
            cases.extend(_matrix_cases(generator.matrices, arg_kinds, rng))
        else:
            rng = np.random.default_rng(stable_seed(*seed_parts, str(number)))
            tries = [_draw_case(generator.random, arg_kinds, rng) for _ in range(generator.random.count)]
            drawn = [case for case in tries if case is not None]
            drawn = _with_a_twin(drawn, rng)
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


def _matrix_cases(spec: MatrixSpec, arg_kinds: Mapping[str, str], rng: np.random.Generator) -> list[Case]:
    """One case per matrix (sizes in the order written, smallest first), the other arguments picked from their lists."""
    sizes = sorted(((size, size) if isinstance(size, int) else (size[0], size[1]) for size in spec.sizes), key=_area)
    count = 1 if spec.family == "hilbert" else spec.count
    cases = []
    for rows, columns in sizes:
        for _ in range(count):
            args: dict[str, Any] = {}
            for name in arg_kinds:
                if name == spec.arg:
                    args[name] = matrix_of(spec.family, rows, columns, spec.condition, rng)
                elif name in spec.args and spec.args[name]:
                    choices = spec.args[name]
                    args[name] = convert_argument(choices[int(rng.integers(len(choices)))], arg_kinds[name])
            cases.append(Case(args=args, origin="random", label=f"{spec.family} {rows}x{columns}"))
    return cases


def _area(size: tuple[int, int]) -> tuple[int, int]:
    return size[0] * size[1], size[0]


def matrix_of(family: str, rows: int, columns: int, condition: float, rng: np.random.Generator) -> np.ndarray:
    """A ``rows`` by ``columns`` matrix of ``family`` (``MATRIX_FAMILIES``), drawn from ``rng`` where it is random.

    ``orthogonal``: orthonormal columns when rows >= columns (orthonormal rows
    otherwise), uniformly distributed (QR of a Gaussian matrix, signs fixed by
    R's diagonal). ``spd``: Q diag(e) Q^T with eigenvalues spread
    geometrically from 1 down to 1/condition, exactly symmetric (its sizes are
    square). ``near-singular``: U diag(s) V^T with singular
    values spread geometrically from 1 down to 1/condition.
    """
    if family == "hilbert":
        i, j = np.indices((rows, columns))
        return 1.0 / (i + j + 1.0)
    if family == "gaussian":
        return rng.standard_normal((rows, columns))
    if family == "orthogonal":
        return _orthonormal(rows, columns, rng) if rows >= columns else _orthonormal(columns, rows, rng).T
    if family == "spd":
        q = _orthonormal(rows, rows, rng)
        matrix = (q * _spread(rows, condition)) @ q.T
        return (matrix + matrix.T) / 2.0
    small = min(rows, columns)
    return (_orthonormal(rows, small, rng) * _spread(small, condition)) @ _orthonormal(columns, small, rng).T


def _spread(n: int, condition: float) -> np.ndarray:
    """``n`` values from 1 down to 1/condition, evenly spaced in log (the largest over the smallest is condition)."""
    return np.geomspace(1.0, 1.0 / condition, n)


def _orthonormal(rows: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """``columns`` orthonormal columns of length ``rows`` (rows >= columns), uniformly distributed."""
    q, r = np.linalg.qr(rng.standard_normal((rows, columns)))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs


# Near twins. The guard (``checks.guard``) calls an entry at a case and at
# inputs a small move away; ordinary drawn case sets hold such twins too, made
# by the same functions, so code that behaves differently on an input close to
# one it has seen loses ordinary checks as well, and gains nothing.


class Directions(Struct, frozen=True):
    """How each argument of a case moves: per name, an array (or a number, or a function's bound arrays).

    ``integers``: nothing but integers could move (each by a whole step).
    """

    near: dict[str, Any]
    other: dict[str, Any]
    integers: bool = False

    @property
    def moves(self) -> bool:
        """Whether any argument moves at all."""
        return bool(self.near)


def _moving_kind(value: Any) -> str | None:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 0:
        return "array"
    if isinstance(value, float) and np.isfinite(value):
        return "number"
    if isinstance(value, TrustedFunction) and value.bound:
        return "function"
    return None


def _integer(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def twin_directions(args: Mapping[str, Any]) -> Directions:
    """Per movable argument: a zero-mean near direction and a second one, from a seed the arguments' bytes give.

    What moves is the data: the float arrays and the arrays bound to a given
    function. Float numbers move only when there are none (a number beside
    arrays is a parameter such as a step or a temperature, and an output
    that follows it alone does not follow the data); integers move, by one,
    only when nothing else can, since an integer is often an index or an
    axis, which no small move keeps.
    """
    kinds = {name: _moving_kind(value) for name, value in args.items()}
    tier = "number" if not {"array", "function"} & set(kinds.values()) else None
    chosen = [name for name, kind in kinds.items() if kind is not None and (tier is None or kind == tier)]
    chosen = [name for name in chosen if tier is not None or kinds[name] != "number"]
    digest = hashlib.sha256()
    for name in sorted(chosen):
        digest.update(name.encode() + b"".join(np.ascontiguousarray(a).tobytes() for a in _arrays(args[name])))
    rng = np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))
    near: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for name, value in args.items():
        if name in chosen:
            pairs = [_array_directions(np.asarray(a), rng) for a in _arrays(value)]
            near[name] = tuple(p[0] for p in pairs)
            other[name] = tuple(p[1] for p in pairs)
    if near:
        return Directions(near, other)
    integers = {name: 1 for name, value in args.items() if _integer(value)}
    return Directions(integers, {name: 2 for name in integers}, integers=True)


def _arrays(value: Any) -> tuple[np.ndarray, ...]:
    if isinstance(value, TrustedFunction):
        return value.arrays
    return (np.asarray(value, dtype=float),)


def _array_directions(value: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    centred = rng.standard_normal(value.shape)
    centred = centred - centred.mean() if centred.size > 1 else centred
    near = centred / max(float(np.abs(centred).max()), 1e-12)
    return near, rng.uniform(-1.0, 1.0, value.shape)


def moved(args: Mapping[str, Any], direction: Mapping[str, Any], by: float, integers: bool = False) -> dict[str, Any]:
    """``args`` with each movable argument moved by ``by`` times its direction, scaled to its size.

    An array moves by ``by`` times its largest finite entry (at least 1); a
    number by ``by`` times itself (1 for zero); infinite entries stay. With
    ``integers``, each integer moves by its direction, whole.
    """
    out = dict(args)
    for name, d in direction.items():
        value = args[name]
        if integers:
            out[name] = int(value) + int(d)
        elif isinstance(value, TrustedFunction):
            bound = tuple((key, _shift(array, step * by)) for (key, array), step in zip(value.bound, d, strict=True))
            out[name] = TrustedFunction(value.name, bound)
        elif isinstance(value, float):
            out[name] = value + by * float(d[0].ravel()[0] if np.size(d[0]) else 1.0) * (abs(value) or 1.0)
        else:
            out[name] = _shift(value, by * d[0])
    return out


def _shift(value: np.ndarray, delta: np.ndarray) -> np.ndarray:
    finite = np.isfinite(value)
    scale = max(float(np.abs(value[finite]).max()), 1.0) if finite.any() else 1.0
    return np.where(finite, value + delta * scale, value).astype(value.dtype)


def stretched(args: Mapping[str, Any], by: float, directions: Directions) -> dict[str, Any]:
    """``args`` far away in a way that keeps the order of every array's entries: ``(1 + by) x + by / 2`` (scaled).

    Only what moves near stretches far (``twin_directions``); integers, when
    only they move, go to ``2 n + 1``.
    """
    out = dict(args)
    for name in directions.near:
        value = args[name]
        if directions.integers:
            out[name] = 2 * int(value) + 1
        elif isinstance(value, TrustedFunction):
            out[name] = TrustedFunction(value.name, tuple((key, _stretch(a, by)) for key, a in value.bound))
        elif isinstance(value, float):
            out[name] = (1.0 + by) * value + by / 2 * (abs(value) or 1.0)
        else:
            out[name] = _stretch(value, by)
    return out


def _stretch(value: np.ndarray, by: float) -> np.ndarray:
    finite = np.isfinite(value)
    scale = max(float(np.abs(value[finite]).max()), 1.0) if finite.any() else 1.0
    return np.where(finite, (1.0 + by) * value + by / 2 * scale, value).astype(value.dtype)


def _with_a_twin(drawn: list[Case], rng: np.random.Generator) -> list[Case]:
    """``drawn`` with its last case replaced by a near twin of another, as the guard would move it.

    Only in sets of three or more, so that most of a set stays independent draws.
    """
    if len(drawn) < 3:
        return drawn
    source = drawn[int(rng.integers(len(drawn) - 1))]
    directions = twin_directions(source.args)
    if not directions.moves or directions.integers:  # a whole step of an integer is no near twin
        return drawn
    twin = moved(source.args, directions.near, TWIN_STEP, directions.integers)
    return [*drawn[:-1], Case(args=twin, origin="random")]
