"""A learner's variant: the values of an exercise's ``params:``, drawn from the learner's id and a course secret.

Each param has a stream of its own, seeded by

    HMAC-SHA256(secret, "grader-variant" NUL exercise id NUL learner id NUL param name)

(the first 16 bytes of the digest, big-endian, seed ``numpy.random.default_rng``).
The key is the course's secret, so a learner who knows another's id, and
the exercise, still cannot compute that learner's values; hashlib and the
PCG64 generator give the same values on every machine and Python version
(Python's ``hash()`` is salted per process, and is never used). A param of
its own stream keeps its value when another param is added or removed.

The secret comes from ``GRADER_VARIANT_SECRET`` (the secret itself) or a
file named by ``GRADER_VARIANT_SECRET_FILE`` (``--variant-secret FILE``
sets it): never from a spec, so it is in no handout, and no result or
reason ever holds it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from msgspec import Struct

from grader.errors import UsageError
from grader.spec.params import ParamSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from grader.spec.models import Exercise

__all__ = [
    "MIN_SECRET_BYTES",
    "SECRET_ENV",
    "SECRET_FILE_ENV",
    "ParamValue",
    "Variant",
    "VariantError",
    "draw_variant",
    "end_variant",
    "read_secret",
    "secret_fingerprint",
    "variant_environ",
    "variant_for",
    "shown_value",
]

SECRET_ENV = "GRADER_VARIANT_SECRET"
SECRET_FILE_ENV = "GRADER_VARIANT_SECRET_FILE"
# A short secret could be found by trying them all against one learner's known variant.
MIN_SECRET_BYTES = 16
_MAX_SECRET_BYTES = 4096
_DOMAIN = b"grader-variant"

ParamValue = int | float | str


class Variant(Struct, frozen=True):
    """One learner's values of an exercise's params, in the order the spec declares them."""

    exercise: str
    learner: str
    values: dict[str, ParamValue]

    def shown(self) -> dict[str, str]:
        """Each value as texts show it: exactly the value graded with, so what the learner reads is true."""
        return {name: shown_value(value) for name, value in self.values.items()}

    def describe(self) -> str:
        """``a = 2.5, n = 4``: the values in one line."""
        return ", ".join(f"{name} = {text}" for name, text in self.shown().items())


class VariantError(ValueError):
    """An expression of the params that gives no value for some variant: a fault of the spec, never the learner's.

    ``loc`` is where the expression is written in the spec (for file:line).
    """

    def __init__(self, message: str, *loc: str | int) -> None:
        super().__init__(message)
        self.loc = loc


def shown_value(value: ParamValue) -> str:
    """A value as a learner reads it: a float in its shortest exact form (``repr``), others as they are."""
    return repr(value) if isinstance(value, float) else str(value)


def read_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The course's variant secret, from ``GRADER_VARIANT_SECRET`` or the file ``GRADER_VARIANT_SECRET_FILE`` names.

    ``None`` when neither is set; ``UsageError`` (one line) when the file
    cannot be read or the secret is shorter than ``MIN_SECRET_BYTES``.
    Surrounding whitespace (a file's final newline) is not part of it.
    """
    env = os.environ if environ is None else environ
    direct = env.get(SECRET_ENV, "")
    named = env.get(SECRET_FILE_ENV, "")
    if direct.strip():
        secret, origin = direct.encode("utf-8").strip(), SECRET_ENV
    elif named.strip():
        path = Path(named)
        try:
            with path.open("rb") as handle:
                secret = handle.read(_MAX_SECRET_BYTES + 1).strip()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the variant secret ({exc.strerror or exc})") from None
        if len(secret) > _MAX_SECRET_BYTES:
            raise UsageError(f"{path}: a variant secret is at most {_MAX_SECRET_BYTES} bytes")
        origin = str(path)
    else:
        return None
    if len(secret) < MIN_SECRET_BYTES:
        raise UsageError(
            f"{origin}: the variant secret is {len(secret)} bytes; use at least {MIN_SECRET_BYTES} random ones "
            "(e.g. python -c 'import secrets; print(secrets.token_hex(16))')"
        )
    return secret


def variant_environ() -> tuple[tuple[str, str], ...]:
    """The variant secret's variables as set here, a file named by its absolute path: what a process that grades for
    this one (a batch worker, wherever it starts) sets to draw the same variants."""
    found = []
    for name in (SECRET_ENV, SECRET_FILE_ENV):
        value = os.environ.get(name, "")
        if value.strip():
            found.append((name, str(Path(value).resolve()) if name == SECRET_FILE_ENV else value))
    return tuple(found)


def secret_fingerprint(secret: bytes | None) -> str:
    """A short keyed digest that tells secrets apart (for cache keys) and from which no secret can be found."""
    if secret is None:
        return "none"
    return hmac.new(secret, _DOMAIN + b"\0fingerprint", hashlib.sha256).hexdigest()[:16]


def draw_variant(exercise: str, params: Mapping[str, ParamSpec], learner: str, secret: bytes) -> Variant:
    """The variant of ``exercise`` that ``learner`` gets: each param drawn from its own keyed stream."""
    values = {name: _draw(spec, _generator(secret, exercise, learner, name)) for name, spec in params.items()}
    return Variant(exercise=exercise, learner=learner, values=values)


def _generator(secret: bytes, exercise: str, learner: str, name: str) -> np.random.Generator:
    message = b"\0".join([_DOMAIN, *(part.encode("utf-8", "surrogateescape") for part in (exercise, learner, name))])
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def _draw(spec: ParamSpec, rng: np.random.Generator) -> ParamValue:
    if spec.uniform is not None:
        low, high = spec.uniform
        value = low + (high - low) * float(rng.random())
        return round(value, spec.round) if spec.round is not None else value
    if spec.integers is not None:
        low_int, high_int = spec.integers
        return int(rng.integers(low_int, high_int, endpoint=True))
    choices = spec.choice or []
    return choices[int(rng.integers(len(choices)))]


def end_variant(exercise: str, params: Mapping[str, ParamSpec], *, high: bool = False) -> Variant:
    """The variant with every param at its low end (or its high end): the first (or last) choice, the range's
    bound, rounded as drawn values are. The low end is an exercise's default variant, the one a handout uses."""
    values = {name: _end(spec, high) for name, spec in params.items()}
    return Variant(exercise=exercise, learner="the high ends" if high else "the low ends", values=values)


def _end(spec: ParamSpec, high: bool) -> ParamValue:
    if spec.uniform is not None:
        value = spec.uniform[1 if high else 0]
        return round(value, spec.round) if spec.round is not None else value
    if spec.integers is not None:
        return spec.integers[1 if high else 0]
    choices = spec.choice or []
    return choices[-1 if high else 0]


def variant_for(quiz: Exercise, learner: str | None, secret: Callable[[], bytes | None]) -> Variant | None:
    """``learner``'s variant of ``quiz`` (any exercise), or ``None`` for one without params; ``secret`` reads the
    course's.

    Without a learner or a secret no variant can be drawn: ``UsageError`` (one line, exit 2), raised before
    anything is graded.
    """
    if not quiz.params:
        return None
    if learner is None:
        raise UsageError(
            f"{quiz.id!r} gives each learner a variant of its own (params:); name the learner with "
            "--learner NAME (grader batch takes it from each learner's folder name)"
        )
    key = secret()
    if key is None:
        raise UsageError(
            f"{quiz.id!r} draws each learner's variant with the course's secret: set {SECRET_FILE_ENV} "
            f"to a file holding it (or pass --variant-secret FILE), or set {SECRET_ENV}"
        )
    return draw_variant(quiz.id, quiz.params, learner, key)
