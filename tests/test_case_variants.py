"""Case sets with params: each learner's inputs computed from their own values, graded as an ordinary exercise."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.case_variants import default_exercise, exercise_for_variant, grade_variant, shown_params
from grader.engine.memory import GradingMemo
from grader.engine.variants import Variant, VariantError, draw_variant
from grader.errors import SpecError
from grader.results import ExerciseResult
from grader.spec.loader import load_catalog, load_spec_file
from tests.fakes import InProcessFactory

SECRET = b"a course secret of enough bytes"
SPEC = """id: shift-scores
kind: implementation
title: Shift scores
prompt: "Write shift(z): z minus its largest entry. Your scores start at {a}."
params:
  a: {uniform: [1, 5], round: 1}
  n: {integers: [2, 4]}
entries:
  shift:
    signature: shift(z)
    args: {z: float_array}
cases:
  yours:
    - examples:
        - {z: {expr: "[a, a + 1, a * n]"}}
        - {z: [1.0, 2.0]}
    - random:
        count: 4
        args:
          z: [{expr: "[a * n, 0.0]"}]
checks:
  - id: right-values
    property: matches-reference
    cases: [yours]
    points: 1
  - id: shift-invariant
    property: identity
    relation: "shift(z + c) == shift(z)"
    where: {c: [{expr: "10 * a"}, 1.0]}
    cases: [yours]
    points: 1
reference_solution: solutions/shift-scores/reference.py
"""
REFERENCE = "import numpy as np\n\n\ndef shift(z):\n    z = np.asarray(z, dtype=float)\n    return z - np.max(z)\n"
# Right only while every score is below LIMIT: whether it passes depends on the learner's own inputs.
BELOW_LIMIT = (
    "import numpy as np\n\n\ndef shift(z):\n    z = np.asarray(z, dtype=float)\n"
    "    return z - np.max(z) if np.max(z) < LIMIT else z\n"
)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/shift-scores.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "solutions/shift-scores").mkdir(parents=True)
    (tmp_path / "solutions/shift-scores/reference.py").write_text(REFERENCE, encoding="utf-8")
    return tmp_path


def _exercise(root: Path):  # type: ignore[no-untyped-def]
    return load_catalog(root / "exercises").exercise("shift-scores")


def _variant(root: Path, learner: str) -> Variant:
    exercise = _exercise(root)
    return draw_variant(exercise.id, exercise.params, learner, SECRET)


def test_exercise_for_variant_computes_cases_and_where_values_and_fills_the_prompt(root: Path) -> None:
    variant = _variant(root, "ada")
    a, n = variant.values["a"], variant.values["n"]
    concrete = exercise_for_variant(_exercise(root), variant)
    examples, drawn = concrete.cases["yours"]
    assert examples.examples == [{"z": [a, a + 1, a * n]}, {"z": [1.0, 2.0]}]
    assert drawn.random.args["z"] == [[a * n, 0.0]]
    assert concrete.checks[1].where == {"c": [10 * a, 1.0]}
    assert concrete.prompt.endswith(f"start at {a!r}.") and not concrete.params


def test_each_learner_is_graded_on_inputs_of_their_own(root: Path) -> None:
    exercise = _exercise(root)

    def grade(source: str, learner: str) -> str:
        concrete = exercise_for_variant(exercise, _variant(root, learner))
        module = SourceModule({"mine.py": source.encode()}, "mine.py")
        return grade_implementation(concrete, module, InProcessFactory(), root=root, memo=GradingMemo()).status

    def largest(learner: str) -> float:  # the largest score of any call: a * n, shifted by c = 10 * a
        values = _variant(root, learner).values
        return float(values["a"]) * float(values["n"]) + 10 * float(values["a"])

    low, high = sorted(["ada", "bob", "cy", "dee", "eve"], key=largest)[::4]
    assert largest(low) < largest(high)
    limit = (largest(low) + largest(high)) / 2
    below = BELOW_LIMIT.replace("LIMIT", repr(limit))
    assert grade(REFERENCE, low) == grade(REFERENCE, high) == "passed"
    assert (grade(below, low), grade(below, high)) == ("passed", "failed")


def test_grade_variant_records_the_values_and_names_only_those_the_prompt_shows(root: Path) -> None:
    variant = _variant(root, "ada")
    seen: list[object] = []

    def grade(concrete):  # type: ignore[no-untyped-def]
        seen.append(concrete)
        return ExerciseResult(id=concrete.id, status="passed", score=2.0, max_score=2.0, reason="All 2 checks passed.")

    result = grade_variant(_exercise(root), variant, grade)
    assert result.variant == variant.values and not seen[0].params  # type: ignore[attr-defined]
    assert result.reason == f"All 2 checks passed. Graded on your variant of the exercise: a = {variant.values['a']!r}."
    assert "n =" not in result.reason and shown_params(_exercise(root), variant).startswith("a = ")


def test_a_value_that_cannot_be_computed_is_the_exercises_error_never_the_learners(root: Path) -> None:
    text = SPEC.replace('"[a, a + 1, a * n]"', '"[a, 1 / (n - 2)]"')
    (root / "exercises/shift-scores.yaml").write_text(text, encoding="utf-8")
    exercise = _exercise(root)
    low = Variant(exercise.id, "someone", {"a": 1.0, "n": 2})
    with pytest.raises(VariantError) as caught:
        exercise_for_variant(exercise, low)
    assert caught.value.loc == ("cases", "yours", 0, "examples", 0, "z")
    result = grade_variant(exercise, low, lambda concrete: pytest.fail("nothing is graded"))
    assert result.status == "error" and "a fault of the exercise, not of your code" in result.reason


def test_the_default_variant_is_every_param_at_its_low_end_and_says_so(root: Path) -> None:
    concrete = default_exercise(_exercise(root))
    assert concrete.cases["yours"][0].examples[0] == {"z": [1.0, 2.0, 2.0]}
    assert "the default values a = 1.0, n = 2" in concrete.prompt


def test_a_template_is_not_planned_before_a_learner_is_known(root: Path) -> None:
    memo = GradingMemo()
    memo.warm([_exercise(root)])
    assert len(memo.plans) == 0


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ('"[a, a + 1, a * n]"', '"[a, m]"', "reads 'm', which is not a param"),
        ('"10 * a"', '"reference.shift(a)"', "numpy functions only"),
        ("Your scores start at {a}.", "Your scores start at {b}.", "{b} names no param"),
    ],
    ids=["unknown-name", "reference-call", "unknown-placeholder"],
)
def test_a_template_that_cannot_mean_anything_is_refused(root: Path, old: str, new: str, words: str) -> None:
    path = root / "exercises/shift-scores.yaml"
    path.write_text(SPEC.replace(old, new), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    assert words in caught.value.message and caught.value.line is not None


def test_a_computed_value_needs_params_to_compute_from(root: Path) -> None:
    path = root / "exercises/shift-scores.yaml"
    text = SPEC.replace("params:\n  a: {uniform: [1, 5], round: 1}\n  n: {integers: [2, 4]}\n", "")
    path.write_text(text.replace(" Your scores start at {a}.", ""), encoding="utf-8")
    with pytest.raises(SpecError, match="declares no params"):
        load_spec_file(path)


@pytest.mark.slow
def test_cli_grades_the_learners_variant_and_validate_names_a_failing_value(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from grader.cli import main

    monkeypatch.chdir(root)
    monkeypatch.setenv("GRADER_VARIANT_SECRET", SECRET.decode())
    (root / "shift.py").write_text(REFERENCE, encoding="utf-8")
    graded = CliRunner().invoke(main, ["grade", "shift.py", "--learner", "ada", "--format", "json"])
    assert graded.exit_code == 0, graded.output
    (exercise,) = json.loads(graded.output)["exercises"]
    assert exercise["variant"] == _variant(root, "ada").values and exercise["status"] == "passed"
    refused = CliRunner().invoke(main, ["grade", "shift.py"])
    assert refused.exit_code == 2 and "--learner NAME" in refused.output
    text = SPEC.replace('"[a, a + 1, a * n]"', '"[a, 1 / (n - 2)]"')
    (root / "exercises/shift-scores.yaml").write_text(text, encoding="utf-8")
    validated = CliRunner().invoke(main, ["validate"])
    assert validated.exit_code == 1
    assert "PROBLEM shift-scores variants: exercises/shift-scores.yaml:15: '[a, 1 / (n - 2)]'" in validated.output
