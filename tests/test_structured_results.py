"""Results that are tuples, scalars, strings and dicts: carried back, indexed, and judged item by item.

The fixtures (tests/fixtures/structured) are graded in process (``tests.fakes``); the slow test runs
``grader validate`` on them as an author would.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.checks.cases import Case
from grader.checks.form import ReturnsForm
from grader.checks.properties import ShapeAndDtype
from grader.checks.reference import MatchesReference
from grader.cli import main
from grader.sandbox import child
from grader.sandbox.answers import decode_answer, numbers_only
from grader.sandbox.outcomes import CallOutcome
from tests.grading_helpers import grade_in_process

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "structured"
CASE = Case(args={"a": 2.0}, label="a=2")


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "structured")
    return tmp_path / "structured"


def _grade(root: Path, exercise_id: str, source: str) -> dict[str, Any]:
    return grade_in_process(root, exercise_id, source)


def _solution(name: str) -> str:
    return (FIXTURES / "solutions" / name).read_text()


def _sent(value: Any) -> CallOutcome:
    """What the parent reads of ``value`` returned in the learner process."""
    kind, types, encoded, keys = child.encode_result(value)
    header: dict[str, Any] = {"op": "result", "index": 0, "ok": True, "kind": kind, "types": types}
    header["values"] = len(encoded)
    if keys:
        header["keys"] = keys
    return decode_answer(0, header, encoded)


@pytest.mark.parametrize(
    "value",
    [(1.5, 3), {"mean": 1.0, "std": np.float64(2.0)}, "Left  ", ("converged", np.arange(3.0)), True, "é\u2028"],
    ids=["tuple-of-scalars", "dict", "str", "str-in-tuple", "bool", "unicode"],
)
def test_result_travels_back_as_returned(value: Any) -> None:
    outcome = _sent(value)
    assert outcome.status == "ok"
    back = outcome.value
    if isinstance(value, dict):
        assert list(back) == list(value) and all(np.array_equal(back[k], value[k]) for k in value)
    elif isinstance(value, tuple):
        assert [type(item) is str for item in back] == [type(item) is str for item in value]
        assert all(np.array_equal(b, v) if not isinstance(v, str) else b == v for b, v in zip(back, value, strict=True))
    else:
        assert back == value if isinstance(value, str) else np.array_equal(back, value)


def test_malformed_mapping_or_string_frames_are_refused() -> None:
    kind, types, encoded, keys = child.encode_result({"mean": 1.0, "std": 2.0})
    header = {"op": "result", "index": 0, "ok": True, "kind": kind, "types": types, "values": 2, "keys": ["a", "a"]}
    assert decode_answer(0, header, encoded).status == "protocol"
    header = {"op": "result", "index": 0, "ok": True, "kind": "single", "types": ["str"], "values": 1}
    assert decode_answer(0, header, [child.encode_result(np.zeros((2, 2)))[2][0]]).status == "protocol"


def test_a_dict_with_other_keys_is_refused_in_the_learner_process() -> None:
    with pytest.raises(TypeError, match="keys are not all short strings"):
        child.encode_result({1: 2.0})


def test_checks_of_numbers_alone_refuse_strings_and_dicts_as_before() -> None:
    refused = numbers_only(_sent({"mean": 1.0}))
    assert refused.status == "bad_value"
    assert refused.error is not None and refused.error["message"].endswith("(dict)")
    assert numbers_only(_sent("x")).error["message"].endswith("(str)")  # type: ignore[index]
    assert numbers_only(_sent((1.0, 2))).status == "ok"


def test_matches_reference_refuses_one_value_where_the_reference_returns_a_tuple() -> None:
    check = MatchesReference(id="same", property="matches-reference", names=["root", "iterations"])
    finding = check.judge(CASE, [_sent(1.4142135623730951), _sent((1.4142135623730951, 5))])
    assert finding is not None
    assert finding.got == "a float"
    assert finding.expected == "a tuple of 2: (root, iterations), as the reference solution returns"
    assert check.judge(CASE, [_sent((1.4142135623730951, 5)), _sent((1.4142135623730951, 5))]) is None
    wrong = check.judge(CASE, [_sent((1.4142135623730951, 6)), _sent((1.4142135623730951, 5))])
    assert wrong is not None and wrong.got.startswith("iterations: 6")


def test_matches_reference_on_an_item_or_field() -> None:
    root = MatchesReference(id="root", property="matches-reference", item=0)
    assert root.judge(CASE, [_sent((1.4142135623730951, 9)), _sent((1.4142135623730951, 5))]) is None
    std = MatchesReference(id="std", property="matches-reference", item="std")
    finding = std.judge(CASE, [_sent({"mean": 0.0, "std": 2.0}), _sent({"std": 1.0, "mean": 0.0})])
    assert finding is not None and finding.got.startswith("std: 2") and finding.expected.startswith("std: 1")


@pytest.mark.parametrize(
    ("compare", "got", "passes"),
    [
        ("exact", "left", True),
        ("exact", "Left", False),
        ("casefold", "LEFT", True),
        ("whitespace", "  left ", True),
        ("whitespace", "Left", False),
    ],
    ids=["exact", "exact-case", "casefold", "whitespace", "whitespace-case"],
)
def test_strings_compare_by_the_mode_given(compare: str, got: str, passes: bool) -> None:
    check = MatchesReference(id="word", property="matches-reference", compare=compare)  # type: ignore[arg-type]
    assert (check.judge(CASE, [_sent(got), _sent("left")]) is None) is passes


def test_a_pattern_is_matched_whole_and_a_number_is_not_a_string() -> None:
    check = MatchesReference(id="word", property="matches-reference", compare="pattern", pattern="left|right")
    assert check.judge(CASE, [_sent("right"), _sent("left")]) is None
    assert check.judge(CASE, [_sent("rightward"), _sent("left")]) is not None
    finding = MatchesReference(id="w", property="matches-reference").judge(CASE, [_sent(1.0), _sent("left")])
    assert finding is not None and "not a str" in finding.got


def test_shape_and_dtype_takes_the_item_it_judges() -> None:
    check = ShapeAndDtype(id="shape", property="shape-and-dtype", item=1)
    reference = _sent((1.0, np.zeros(3)))
    assert check.judge(CASE, [_sent((2.0, np.ones(3))), reference]) is None
    finding = check.judge(CASE, [_sent((2.0, [1.0, 1.0, 1.0])), reference])
    assert finding is not None and "list" in finding.got
    assert check.judge(CASE, [_sent(np.ones(3)), reference]) is not None


@pytest.mark.parametrize(
    ("kind", "value", "passes"),
    [
        ("float", 1.5, True),
        ("float", np.float64(1.5), True),
        ("float", np.array([1.5]), False),
        ("int", 3, True),
        ("int", 3.0, False),
        ("bool", True, True),
        ("bool", 1, False),
        ("str", "ok", True),
        ("str", 1.0, False),
    ],
    ids=["float", "numpy-float", "array-not-float", "int", "float-not-int", "bool", "int-not-bool", "str", "not-str"],
)
def test_returns_form_knows_scalar_kinds(kind: str, value: Any, passes: bool) -> None:
    check = ReturnsForm(id="form", property="returns-form", items=[kind])  # type: ignore[list-item]
    assert (check.judge(CASE, [_sent(value)]) is None) is passes


def test_returns_form_judges_a_field() -> None:
    check = ReturnsForm(id="form", property="returns-form", items=["float"], item="mean")
    assert check.judge(CASE, [_sent({"mean": 1.0})]) is None
    finding = check.judge(CASE, [_sent((1.0, 2.0))])
    assert finding is not None and finding.expected == "a dict with the field 'mean'"


def test_newton_reference_passes_and_the_root_only_solution_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    checks = _grade(root, "newton-sqrt", _solution("newton-sqrt/reference.py"))
    assert {name: check.status for name, check in checks.items()} == dict.fromkeys(checks, "passed")
    wrong = _grade(root, "newton-sqrt", _solution("newton-sqrt/wrong_root_only.py"))
    assert wrong["same-as-reference"].status == "failed"
    assert wrong["same-as-reference"].got == "a float"
    assert wrong["same-as-reference"].expected == "a tuple of 2: (root, iterations), as the reference solution returns"
    assert wrong["root-matches"].status == "failed"  # never judged on part of what the reference returns
    assert wrong["squares-back"].got == "newton_sqrt returned a float, which holds no items to index"
    assert wrong["returns-root-and-steps"].status == "failed"


def test_stats_dict_fields_are_judged_by_name(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    checks = _grade(root, "sample-stats", _solution("sample-stats/reference.py"))
    assert {name: check.status for name, check in checks.items()} == dict.fromkeys(checks, "passed")
    ddof = _grade(root, "sample-stats", _solution("sample-stats/wrong_sample_std.py"))
    assert ddof["std-matches"].status == "failed" and ddof["std-matches"].got.startswith("std: ")
    assert ddof["mean-is-average"].status == "passed"
    tuple_ = _grade(root, "sample-stats", _solution("sample-stats/wrong_tuple.py"))
    assert tuple_["mean-and-std"].expected == "a dict with the fields mean, std, as the reference solution returns"
    assert "reads a field of a dict" in tuple_["mean-is-average"].got
    capital = _grade(root, "sample-stats", _solution("sample-stats/wrong_capitalised.py"))
    assert capital["says-the-skew"].status == "passed"  # casefold
    assert capital["says-the-skew-exactly"].status == "failed"


def test_a_string_returned_to_a_numeric_check_is_refused_as_before(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    spec = root / "exercises/sample-stats.yaml"
    finite = "  - id: finite-verdict\n    property: finite\n    entry: skew_word\n    cases: [samples]\n"
    spec.write_text(spec.read_text().replace("checks:\n", "checks:\n" + finite, 1))
    check = _grade(root, "sample-stats", _solution("sample-stats/reference.py"))["finite-verdict"]
    assert check.status == "error"
    assert "returned a str object, not an array of numbers" in check.reason


@pytest.mark.slow
def test_the_fixtures_validate(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    result = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "validate"])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", ["newton-sqrt", "sample-stats"])
def test_the_worked_examples_of_the_docs_validate(tmp_path: Path, exercise_id: str) -> None:
    """docs/authoring.md's specs, with the fixtures' solutions, pass ``grader validate`` as written."""
    doc = (Path(__file__).resolve().parents[1] / "docs/authoring.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL) if b.startswith(f"id: {exercise_id}\n")
    )
    root = _copy(tmp_path)
    for spec in (root / "exercises").iterdir():
        spec.unlink()
    (root / "exercises" / f"{exercise_id}.yaml").write_text(block)
    result = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "validate"])
    assert result.exit_code == 0, result.output
