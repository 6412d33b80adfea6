"""Failure modes: how a failing case failed, and which of a check's hints its facts show to be true.

Learners fail checks in many ways: a TypeError, a timeout, a result cast to
float32 that turned 1e300 into inf. ``classify_failure`` names the mode of
the first failing case from what the learner's calls returned, with the
facts a hint's premise (``checks.base.Premise``) is tested on: the
exception raised, the float warnings, the arguments written into (and, from
``engine.premises``, the known mistakes the answers agree with); for the
modes whose cause the facts show (a result of a narrower dtype than the
reference's, an exception whose message suggests its fix) a sentence says so.
``fitting_hint`` then gives the first hint whose premise holds, or none.

Modes, checked in this order:

- ``timeout``: a call gave no answer within its limit.
- ``wrong-value`` for a check that expects an exception: what was raised, or not, is what it judges.
- ``exception``: a call raised or ended without a value (a crash, a refused reply).
- ``shape``: the result has the wrong shape or form (a tuple, a list, an array of another shape).
- ``dtype``: the result's dtype lost what the inputs held: an integer result from float
  inputs where the reference's answer is of floats, or a float32/float16 result from float64
  inputs whose range it could not hold.
- ``nan`` / ``inf``: the result holds NaN (or ±inf) where the inputs held none, and the
  finding shows it.
- ``wrong-value``: right shape, finite, wrong numbers; also any failure of a check that
  judges the inputs after the call (once the call returned).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec import Struct
from msgspec.structs import replace

from grader.checks.display import format_number
from grader.sandbox.answers import numbers_only

if TYPE_CHECKING:
    from grader.checks.base import Call, Check, FailureMode, Finding, Premise
    from grader.checks.cases import Case
    from grader.sandbox.outcomes import CallOutcome

__all__ = ["Failure", "classify_failure", "exception_hint", "fitting_hint", "premise_holds"]


class Failure(Struct, frozen=True):
    """The mode of a failing case; ``cause``: what its facts show (a dtype that lost range, a relation between
    got and expected on every failing case); ``hint``: what its exception's own message suggests. Both are
    empty when the facts say nothing more. ``explained``: the cause holds a relation read off the values.

    What the hints' premises are tested on (``Premise``): ``raised``, the type of the exception the learner's
    call raised; ``warned``, the NumPy float warnings their calls raised; ``changed``, the arguments their call
    wrote into; ``like``, the known-wrong solutions whose answers theirs equal on every failing case.
    """

    mode: FailureMode
    cause: str = ""
    hint: str = ""
    explained: bool = False
    raised: str = ""
    warned: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    like: frozenset[str] = frozenset()


def fitting_hint(check: Check, failure: Failure) -> str:
    """The hint for this failure: its exception's own suggestion, else the first of the check's hints whose
    premise the failure shows, else none.

    A wrong value explained by what the values show is given no hint premised on its mode alone, which was
    written for some other wrong value and may contradict what this one shows.
    """
    if failure.hint:
        return failure.hint
    for hint in check.hint_list():
        if premise_holds(hint.when, failure):
            if failure.explained and failure.mode == "wrong-value" and not _shows_data(hint.when):
                continue
            return hint.text
    return ""


def premise_holds(when: Premise, failure: Failure) -> bool:
    """Whether the failing case shows every part of ``when`` (its mode, the known mistake, the warning, ...)."""
    return (
        (not when.mode or failure.mode in when.mode)
        and (when.like is None or when.like in failure.like)
        and (not when.warned or any(kind in failure.warned for kind in when.warned))
        and (when.raised is None or when.raised == failure.raised)
        and (not when.changed or any(name in failure.changed for name in when.changed))
    )


def _shows_data(when: Premise) -> bool:
    return bool(when.like or when.warned or when.raised or when.changed)


# Messages whose exception itself says what to change; matched against the message, in order.
_EXCEPTION_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"truth value of an array with more than one element is ambiguous"),
        "`if`, `and`, `or` and `not` need one True or False, but an array comparison gives one per entry: "
        "use np.where(condition, a, b) to choose entry by entry, or `x is None` to test whether an argument was given",
    ),
    (
        re.compile(r"operands could not be broadcast together"),
        "the shapes in the message do not line up; a sum or maximum taken along an axis keeps that axis "
        "only with keepdims=True",
    ),
    (
        re.compile(r"axis -?\d+ is out of bounds for array of dimension \d+"),
        "the array has fewer axes than the axis used; work along the `axis` argument as given "
        "(axis=-1 is the last axis of an array of any dimension)",
    ),
    (
        re.compile(r"'NoneType'|NoneType\b"),
        "a value here is None; a function that ends without a `return` statement returns None",
    ),
    (
        re.compile(
            r"takes \d+ positional arguments? but \d+ (were|was) given|missing \d+ required positional argument"
            r"|got an unexpected keyword argument"
        ),
        "the function's parameters differ from the exercise's signature: keep its names, order and defaults",
    ),
    (re.compile(r"name 'np' is not defined"), "add `import numpy as np` at the top of the file"),
)

_SHAPE_GOT = re.compile(r"^(an array of shape |shape \(|a tuple of \d+ values?\b)")
_NUMBER_WORD = {"nan": re.compile(r"\bnan\b"), "inf": re.compile(r"\binf\b")}


def exception_hint(error: dict[str, Any] | None) -> str:
    """The hint an exception's own message suggests (``if mask:`` on an array -> np.where), else empty."""
    message = str((error or {}).get("message", ""))
    for pattern, hint in _EXCEPTION_HINTS:
        if pattern.search(message):
            return hint
    return ""


def classify_failure(
    check: Check, case: Case, calls: list[Call], outcomes: list[CallOutcome], finding: Finding
) -> Failure:
    """The mode of a failing case, from the learner's outcomes on it and the check's finding, with the facts
    the hints' premises are tested on."""
    if not check.reads_structure():  # as judge_case refused them
        outcomes = [numbers_only(outcome) for outcome in outcomes]
    pairs = list(zip(calls, outcomes, strict=False))
    mine = [o for call, o in pairs if call.on == "learner"] or outcomes
    theirs = [o for call, o in pairs if call.on == "reference" and o.status == "ok"]
    failure = _mode(check, case, mine, theirs, finding)
    raised = next((str((o.error or {}).get("type", "")) for o in mine if o.status == "raised"), "")
    events = [event for o in mine for event in o.float_errors]
    warned = frozenset(str(e.get("kind")) for e in events) | {f"{e.get('kind')} in {e.get('in')}" for e in events}
    changed = frozenset(name for call, o in pairs if call.on == "learner" for name in _written(call, o))
    return replace(failure, raised=raised, warned=warned, changed=changed)


def _written(call: Call, outcome: CallOutcome) -> list[str]:
    """The arguments of ``call`` that the call wrote into, read off the inputs it handed back."""
    sent = [(name, value) for name, value in call.args.items() if isinstance(value, np.ndarray)]
    return [
        name
        for (name, before), after in zip(sent, outcome.inputs_after, strict=False)
        if before.shape != after.shape or not np.array_equal(before, after, equal_nan=before.dtype.kind == "f")
    ]


def _mode(check: Check, case: Case, mine: list[CallOutcome], theirs: list[CallOutcome], finding: Finding) -> Failure:
    if finding.status == "timeout" or any(o.status == "timeout" for o in mine):
        return Failure("timeout")
    if check.expects_exception and all(o.status in ("ok", "raised") for o in mine):
        return Failure("wrong-value")  # what was raised, or not, is what the check judges: its own hint fits
    for outcome in mine:
        if outcome.status == "raised":
            return Failure("exception", hint=exception_hint(outcome.error))
        if outcome.status != "ok":
            return Failure("exception")
    if check.wants_inputs_back:
        return Failure("wrong-value")  # the check judges the inputs after the call, whatever the result holds
    if _SHAPE_GOT.match(finding.got) or finding.expected.startswith("a numpy.ndarray"):
        return Failure("shape")
    values = [value for outcome in mine for value in outcome.values]
    inputs = [np.asarray(v) for v in case.args.values() if isinstance(v, (np.ndarray, float))]
    expected = [value for outcome in theirs for value in outcome.values]
    dtype = _narrowing(values, inputs, expected, finding)
    if dtype is not None:
        return dtype
    floats = [v for v in values if v.dtype.kind in "fc"]
    float_inputs = [v for v in inputs if v.dtype.kind in "fc"]
    if _shows("nan", finding) and any(np.isnan(v).any() for v in floats):
        if not any(np.isnan(v).any() for v in float_inputs):
            return Failure("nan")
    if _shows("inf", finding) and any(np.isinf(v).any() for v in floats):
        if all(np.isfinite(v).all() for v in float_inputs):
            return Failure("inf")
    return Failure("wrong-value")


def _shows(word: str, finding: Finding) -> bool:
    """Whether the finding itself shows a NaN (or an inf): only then is that value what failed the check."""
    return bool(_NUMBER_WORD[word].search(finding.got) or _NUMBER_WORD[word].search(finding.note))


def _narrowing(
    values: list[np.ndarray], inputs: list[np.ndarray], expected: list[np.ndarray], finding: Finding
) -> Failure | None:
    """A ``dtype`` failure when a result's dtype cannot hold what the float64 inputs held, else ``None``.

    An integer or boolean result is one only beside the reference's answer to the same call, when that is
    of floats: an integer is the right answer to some questions (a count, an index).
    """
    float_inputs = [v for v in inputs if v.dtype.kind == "f"]
    if not float_inputs or any(v.dtype.itemsize < 8 for v in float_inputs):
        return None  # inputs of low precision: a result of the same precision lost nothing
    for index, value in enumerate(values):
        if value.dtype.kind in "iub":
            reference = expected[index] if index < len(expected) else None
            if reference is None or reference.dtype.kind not in "fc":
                continue  # no float answer beside it: nothing shows that whole numbers are not what is asked
            holds = "only True and False" if value.dtype.kind == "b" else "whole numbers only"
            return Failure(
                "dtype",
                cause=f"Your result has dtype {value.dtype}, which holds {holds}; the expected result has "
                f"dtype {reference.dtype}.",
            )
        if value.dtype.kind == "f" and value.dtype.itemsize < 8:
            cause = _range_lost(value.dtype, float_inputs, finding)
            if cause:
                return Failure("dtype", cause=cause)
    return None


def _range_lost(dtype: np.dtype[Any], inputs: list[np.ndarray], finding: Finding) -> str:
    """Why a float32 (or float16) result became inf or NaN: an input beyond its range, or a value computed beyond it."""
    if not (_shows("nan", finding) or _shows("inf", finding)):
        return ""
    info = np.finfo(dtype)
    largest = float(info.max)
    entries = np.concatenate([v[np.isfinite(v)].ravel() for v in inputs])
    outside = entries[np.abs(entries) > largest]
    if outside.size:
        biggest = float(outside[np.argmax(np.abs(outside))])
        became = "inf" if biggest > 0 else "-inf"
        return (
            f"Your result is {dtype}; {format_number(biggest)} does not fit in {dtype} (max {largest:.2g}), "
            f"so it became {became}. Compute in float64, the dtype of the input."
        )
    return (
        f"Your result is {dtype}, whose largest number is {largest:.2g} (float64 reaches 1.8e+308): a value "
        f"such as exp({int(np.log(largest)) + 1}) fits in float64 but is inf in {dtype}. "
        "Compute in float64, the dtype of the input."
    )
