"""Properties of softmax where it meets the rest of a model: temperature, log-probabilities, masks, losses.

Each class is one property of the ``softmax-bridge`` lesson, reusable by any
spec: the limits of softmax(z / T) as T goes to 0 or to infinity, entropy
growing with T, log-probabilities whose exponentials sum to one, masked
attention entries getting weight exactly 0, and a loss that averages over
the batch. As in ``grader.checks.properties``, a float32 result is judged
with tolerances fit for float32.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

import numpy as np

from grader.checks.base import ArrayCheck, Call, Check, Finding, array_result
from grader.checks.cases import Case
from grader.checks.display import format_number, format_pair, format_value
from grader.checks.numbers import nothing_judged
from grader.checks.properties import sums_finding, zero_where
from grader.record import Field, field_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["EntropyGrows", "ExpSumsToOne", "MaskedGetsZero", "MeanOverBatch", "TemperatureLimit"]


def _low_precision(value: np.ndarray, case: Case) -> bool:
    return value.dtype == np.float32 or any(
        isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values()
    )


def _atol(value: np.ndarray, case: Case, atol: float) -> float:
    return max(atol, 1e-6) if _low_precision(value, case) else atol


def _entropy(weights: np.ndarray) -> float:
    """Shannon entropy in nats, with 0 log 0 = 0."""
    positive = weights[weights > 0]
    return float(-np.sum(positive * np.log(positive)))


class ExpSumsToOne(ArrayCheck):
    """The result holds log-probabilities: its exponentials sum to one along the normalised axis."""

    property: Literal["exp-sums-to-one"]
    axis_arg: str | None = Field(default="axis", description="argument naming the axis; None to use `axis`")
    axis: int = Field(default=-1, description="the normalised axis where the case gives no `axis_arg` argument")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        return f"the exponentials of what {entry} returns sum to 1 along the normalised axis"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        axis = self.axis
        if self.axis_arg and case.args.get(self.axis_arg) is not None:
            axis = int(case.args[self.axis_arg])
        if got.ndim == 0 or not -got.ndim <= axis < got.ndim:
            return Finding(got=f"an array of shape {got.shape}", expected=f"an array with an axis {axis}")
        with np.errstate(all="ignore"):
            sums = np.exp(got).sum(axis=axis)
        atol = _atol(outcomes[0].values[0], case, self.atol)
        if np.all(np.abs(sums - 1) <= atol):
            return None
        note = "Some results are positive: a log-probability is never above 0." if np.any(got > 0) else ""
        finding = sums_finding(sums, 1.0, axis, atol, of="the exponentials")
        finding.note = note
        return finding


class TemperatureLimit(ArrayCheck):
    """softmax(z / T) at an extreme temperature is at its limit: one-hot on the largest score, or uniform.

    For ``one-hot`` the cases must use a T far below every gap between the
    largest score and the others (the weight of a gap g is about exp(-g / T));
    tied largest scores share the weight equally. For ``uniform`` the cases
    must use a T far above the spread of the scores.
    """

    property: Literal["temperature-limit"]
    limit: Literal["one-hot", "uniform"] = Field(
        description="the limit expected: one-hot (T far below the score gaps) or uniform (T far above their spread)"
    )
    arg: str = Field(default="z", description="the argument holding the scores")
    atol: float = Field(default=1e-6, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        if self.limit == "one-hot":
            return f"at a tiny temperature {entry} puts all the weight on the largest score"
        return f"at a huge temperature {entry} gives every score the same weight"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        scores = np.asarray(case.args[self.arg], dtype=float)
        if got.shape != scores.shape:
            return Finding(got=f"an array of shape {got.shape}", expected=f"shape {scores.shape}")
        if self.limit == "one-hot":
            top = scores == scores.max()
            expected = np.where(top, 1.0 / top.sum(), 0.0)
            words = (
                "all the weight on the largest score"
                if top.sum() == 1
                else "the weight shared by the tied largest scores"
            )
        else:
            expected = np.full(scores.shape, 1.0 / scores.size)
            words = "the same weight for every score"
        atol = _atol(outcomes[0].values[0], case, self.atol)
        if np.all(np.isfinite(got)) and np.allclose(got, expected, rtol=0, atol=atol):
            return None
        pair = format_pair(got, expected, atol=atol)
        return Finding(
            got=pair.got_with_where(),
            expected=f"{pair.expected}, {words} (atol {format_number(atol)})",
        )


class EntropyGrows(Check):
    """Raising one argument (the temperature) never lowers the entropy of the weights, and does raise it overall."""

    property: Literal["entropy-grows"]
    arg: str = Field(default="T", description="the argument to raise")
    values: list[float] = Field(min_length=2, description="increasing values of `arg`, called on the same scores")
    score_arg: str = Field(default="z", description="the argument holding the scores")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    @field_validator("values")
    @classmethod
    def _increasing(cls, values: list[float]) -> list[float]:
        if any(b <= a for a, b in pairwise(values)):
            raise ValueError("values must be strictly increasing")
        return values

    def default_description(self, entry: str) -> str:
        return f"the weights {entry} returns get more spread out (higher entropy) as {self.arg} grows"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, dict(case.args, **{self.arg: value})) for value in self.values]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        entropies = []
        for value, outcome in zip(self.values, outcomes, strict=True):
            got, problem = array_result(outcome)
            if problem:
                return problem
            assert got is not None
            if not np.all(np.isfinite(got)) or np.any(got < 0) or got.sum() <= 0:
                return Finding(
                    got=f"{format_value(got)} at {self.arg}={format_number(value)}",
                    expected="finite, non-negative weights",
                )
            entropies.append(_entropy(got / got.sum()))
        atol = _atol(outcomes[0].values[0], case, self.atol)
        shown = ", ".join(
            f"{format_number(h)} at {self.arg}={format_number(v)}" for v, h in zip(self.values, entropies, strict=True)
        )
        falls = any(later < earlier - atol for earlier, later in pairwise(entropies))
        scores = np.asarray(case.args[self.score_arg], dtype=float)
        flat = bool(np.all(scores == scores.flat[0]))
        if falls or (not flat and entropies[-1] <= entropies[0] + atol):
            return Finding(
                got=f"entropies {shown}",
                expected=f"entropies that grow with {self.arg}",
                note=f"Dividing the scores by a larger {self.arg} shrinks the gaps between them, "
                "so the weights should even out.",
            )
        return None

    def verified(self, cases: list[Case]) -> str:
        values = ", ".join(format_number(v) for v in self.values)
        return f"on {len(cases)} input{'s' if len(cases) != 1 else ''}, each at {self.arg} = {values}"


class MaskedGetsZero(ArrayCheck):
    """Where the boolean mask is False the weight is exactly 0; cases without a mask pass trivially."""

    property: Literal["masked-gets-zero"]
    mask_arg: str = Field(default="mask", description="the argument holding the boolean mask")

    def default_description(self, entry: str) -> str:
        return f"{entry} gives every entry whose {self.mask_arg} is False a weight of exactly 0"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        mask = case.args.get(self.mask_arg)
        if mask is None:
            return None
        return zero_where(got, ~np.asarray(mask, dtype=bool), f"{self.mask_arg} is False")


class MeanOverBatch(Check):
    """A per-example loss averaged over the batch: repeating the whole batch leaves it unchanged."""

    property: Literal["mean-over-batch"]
    args: list[str] = Field(default=["logits", "targets"], min_length=1, description="arguments indexed by example")
    repeats: int = Field(default=3, ge=2, description="how many times the whole batch is repeated")
    rtol: float = Field(default=1e-6, ge=0, description="relative tolerance")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        return f"{entry} averages over the batch: repeating every example {self.repeats} times changes nothing"

    def plan(self, case: Case, entry: str) -> list[Call]:
        tiled = {
            name: (np.concatenate([value] * self.repeats, axis=0) if name in self.args else value)
            for name, value in case.args.items()
        }
        return [Call(entry, case.args), Call(entry, tiled)]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        once, problem = array_result(outcomes[0])
        if problem:
            return problem
        repeated, problem = array_result(outcomes[1])
        if problem:
            return problem
        assert once is not None and repeated is not None
        empty = nothing_judged([once, repeated], case.args)
        if empty:  # two empty results are allclose, and show nothing
            return Finding(got=f"a result that {empty}", expected="the same value both times")
        rtol, atol = (
            (max(self.rtol, 1e-5), max(self.atol, 1e-6))
            if _low_precision(outcomes[0].values[0], case)
            else (self.rtol, self.atol)
        )
        if once.shape == repeated.shape and np.allclose(repeated, once, rtol=rtol, atol=atol):
            return None
        note = ""
        if once.shape == repeated.shape and np.allclose(repeated, self.repeats * once, rtol=1e-4):
            note = f"It grew {self.repeats} times: the losses are summed, not averaged."
        pair = format_pair(repeated, once, rtol=rtol, atol=atol)
        return Finding(
            got=f"{pair.got} with the batch repeated {self.repeats} times{pair.which()}",
            expected=f"{pair.expected}, the value without repeating it",
            note=note,
        )
