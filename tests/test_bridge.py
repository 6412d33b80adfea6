"""The softmax-bridge properties, judged on hand-made outcomes."""

from __future__ import annotations

import numpy as np

from grader.checks.bridge import (
    EntropyGrows,
    ExpSumsToOne,
    MaskedGetsZero,
    MeanOverBatch,
    TemperatureLimit,
)
from grader.checks.cases import Case
from grader.sandbox.outcomes import CallOutcome


def _ok(value: object) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.asarray(value)], kind="single", types=["ndarray"])


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def test_exp_sums_to_one_accepts_log_probabilities_and_refuses_probabilities() -> None:
    check = ExpSumsToOne(id="e", property="exp-sums-to-one")
    z = np.array([1.0, 2.0, 3.0])
    case = Case(args={"z": z})
    assert check.judge(case, [_ok(np.log(_softmax(z)))]) is None
    finding = check.judge(case, [_ok(_softmax(z))])
    assert finding is not None and "never above 0" in finding.note


def test_temperature_limit_one_hot_shares_ties_and_uniform_is_flat() -> None:
    one_hot = TemperatureLimit(id="o", property="temperature-limit", limit="one-hot")
    case = Case(args={"z": np.array([2.0, 2.0, 1.0]), "T": 1e-8})
    assert one_hot.judge(case, [_ok([0.5, 0.5, 0.0])]) is None
    assert one_hot.judge(case, [_ok([1.0, 0.0, 0.0])]) is not None
    uniform = TemperatureLimit(id="u", property="temperature-limit", limit="uniform", atol=1e-4)
    case = Case(args={"z": np.array([1.0, 2.0]), "T": 1e9})
    assert uniform.judge(case, [_ok([0.5, 0.5])]) is None
    assert uniform.judge(case, [_ok([0.0, 1.0])]) is not None


def test_entropy_grows_calls_each_temperature_and_refuses_a_sharpening_slider() -> None:
    check = EntropyGrows(id="h", property="entropy-grows", values=[0.5, 1.0, 4.0])
    z = np.array([1.0, 2.0, 3.0])
    case = Case(args={"z": z, "T": 1.0})
    assert [call.args["T"] for call in check.plan(case, "f")] == [0.5, 1.0, 4.0]
    assert check.judge(case, [_ok(_softmax(z / t)) for t in (0.5, 1.0, 4.0)]) is None
    assert check.judge(case, [_ok(_softmax(z * t)) for t in (0.5, 1.0, 4.0)]) is not None


def test_masked_gets_zero_needs_exact_zeros_and_skips_unmasked_cases() -> None:
    check = MaskedGetsZero(id="m", property="masked-gets-zero")
    mask = np.array([[True, False]])
    assert check.judge(Case(args={"mask": mask}), [_ok([[1.0, 0.0]])]) is None
    assert check.judge(Case(args={"mask": mask}), [_ok([[1.0, 1e-300]])]) is not None
    assert check.judge(Case(args={"mask": None}), [_ok([[0.4, 0.6]])]) is None


def test_mean_over_batch_tiles_the_batch_and_explains_a_sum() -> None:
    check = MeanOverBatch(id="b", property="mean-over-batch", repeats=3)
    case = Case(args={"logits": np.zeros((2, 3)), "targets": np.array([0, 1])})
    calls = check.plan(case, "f")
    assert calls[1].args["logits"].shape == (6, 3) and calls[1].args["targets"].tolist() == [0, 1] * 3
    assert check.judge(case, [_ok(1.1), _ok(1.1)]) is None
    finding = check.judge(case, [_ok(1.1), _ok(3.3)])
    assert finding is not None and "summed" in finding.note
