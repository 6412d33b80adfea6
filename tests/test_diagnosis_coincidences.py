"""Diagnoses that cannot be coincidences: learner code that agrees with a known mistake on the input a reason
shows, but not on the inputs chosen to tell mistakes apart, is told no known mistake; and an experiment's
inference (which value is scaled, whether an argument is used) is stated only when other calls confirm it.

The learners are under tests/coincidences/<exercise-id>/, each making a mistake the catalog does not list;
the in-process fake runner answers for them and for the catalog's solutions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.results import ExerciseResult
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = ROOT / "tests" / "coincidences"


@pytest.fixture(scope="module")
def memo() -> GradingMemo:
    return GradingMemo()  # the catalog's solutions answer once for the module


def _grade(catalog, memo: GradingMemo, exercise_id: str, path: Path) -> ExerciseResult:
    return grade_implementation(
        catalog.exercise(exercise_id),
        SourceModule({"mine.py": path.read_bytes()}, "mine.py"),
        InProcessFactory(),
        root=ROOT,
        memo=memo,
    )


def _entry(path: Path, name: str):
    namespace: dict[str, object] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # trusted fixtures of this repository
    return namespace[name]


def test_coincidence_dividing_by_half_of_dk_is_not_no_scaling_though_it_agrees_where_dk_is_2(catalog, memo) -> None:
    learner = LEARNERS / "attention-weights" / "half_power.py"
    mine = _entry(learner, "attention_weights")
    theirs = _entry(ROOT / "solutions/attention-weights/wrong_no_scaling.py", "attention_weights")
    shown = (np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))  # computes-the-right-values, d_k = 2
    assert np.array_equal(mine(*shown), theirs(*shown))
    result = _grade(catalog, memo, "attention-weights", learner)
    failed = [check for check in result.checks if check.status == "failed"]
    assert "computes-the-right-values" in {check.id for check in failed}
    assert {check.id: check.diagnosis for check in result.checks if check.diagnosis} == {}
    assert not any("known mistake" in check.reason for check in failed)


def test_coincidence_a_jacobian_times_h_squared_is_not_a_matrix_of_zeros(catalog, memo) -> None:
    learner = LEARNERS / "argmax-zero-gradient" / "times_h_squared.py"
    mine = _entry(learner, "numerical_jacobian")
    softmax = _entry(ROOT / "solutions/argmax-zero-gradient/given.py", "softmax")
    tiny = mine(softmax, np.array([0.0, 0.0]), 1e-5)
    assert np.allclose(tiny, 0.0, atol=1e-9) and np.any(tiny != 0)  # at the shown step it is zeros, within atol
    result = _grade(catalog, memo, "argmax-zero-gradient", learner)
    assert {check.id: check.diagnosis for check in result.checks if check.diagnosis} == {}
    assert not any("without nudging" in check.reason for check in result.checks)


def test_coincidence_swapped_values_are_said_to_be_swapped_never_unscaled(catalog, memo) -> None:
    result = _grade(catalog, memo, "scaling-experiment", LEARNERS / "scaling-experiment" / "swapped.py")
    reasons = {check.id: check.reason for check in result.checks if check.status == "failed"}
    assert "scaled-variance-near-one" in reasons
    assert not any("not divided by sqrt" in reason or "divided by d_k" in reason for reason in reasons.values())
    assert "the two come back in the other order" in reasons["unscaled-variance-near-dk"]


def test_coincidence_identical_pairs_are_not_said_to_ignore_n_samples(catalog, memo) -> None:
    result = _grade(catalog, memo, "scaling-experiment", LEARNERS / "scaling-experiment" / "identical_pairs.py")
    reasons = {check.id: check.reason for check in result.checks if check.status == "failed"}
    assert "uses-n-samples" in reasons
    assert not any("ignored" in reason for reason in reasons.values())
    assert {check.id: check.diagnosis for check in result.checks if check.diagnosis} == {}


@pytest.mark.parametrize(
    ("wrong", "check_id", "said"),
    [
        ("wrong_not_scaled.py", "scaled-variance-near-one", "the dot products were not divided by sqrt(d_k)"),
        ("wrong_divides_by_dk.py", "scaled-variance-near-one", "divided by d_k, not by sqrt(d_k)"),
        ("wrong_ignores_n_samples.py", "uses-n-samples", "The value of n_samples seems to be ignored"),
        ("wrong_fixed_seed.py", "different-seeds-differ", "The value of seed seems to be ignored"),
    ],
    ids=["not-scaled", "divides-by-dk", "ignores-n-samples", "fixed-seed"],
)
def test_an_experiment_inference_the_calls_confirm_is_still_stated(catalog, memo, wrong, check_id, said) -> None:
    result = _grade(catalog, memo, "scaling-experiment", ROOT / "solutions" / "scaling-experiment" / wrong)
    (check,) = [check for check in result.checks if check.id == check_id]
    assert check.status == "failed" and said in check.reason


@pytest.mark.parametrize(
    ("exercise_id", "wrong_id"),
    [("attention-weights", "no-scaling"), ("argmax-zero-gradient", "returns-zeros")],
    ids=["no-scaling", "returns-zeros"],
)
def test_the_known_mistakes_those_learners_resemble_are_still_named(catalog, memo, exercise_id, wrong_id) -> None:
    (wrong,) = [w for w in catalog.exercise(exercise_id).known_wrong if w.id == wrong_id]
    result = _grade(catalog, memo, exercise_id, ROOT / wrong.path)
    named = {check.diagnosis for check in result.checks if check.diagnosis}
    assert named == {wrong.misconception}
