"""PrairieLearn external-grader results: score in [0, 1], gradable, per-test points and messages."""

from __future__ import annotations

import json
import math

import pytest
from test_report_formats import CASES

from grader.report.prairielearn import format_prairielearn


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_prairielearn_has_every_field(case: str) -> None:
    report = CASES[case]()
    results = json.loads(format_prairielearn(report))
    assert isinstance(results["gradable"], bool)
    assert 0.0 <= results["score"] <= 1.0 and results["message"]
    if report.max_score and results["gradable"]:
        assert math.isclose(results["score"], report.score / report.max_score)
    for test in results["tests"]:
        assert {"name", "points", "max_points", "message", "output"} <= set(test)
        assert 0 <= test["points"] <= test["max_points"] and test["message"]
    assert math.isclose(sum(t["points"] for t in results["tests"]), report.score)


@pytest.mark.parametrize(
    ("case", "gradable"),
    [("passed", True), ("failed", True), ("quiz", True), ("error", False), ("missing", False), ("nothing", False)],
    ids=["passed", "failed", "quiz", "syntax-error", "missing", "nothing"],
)
def test_prairielearn_gradable_only_when_some_check_ran(case: str, gradable: bool) -> None:
    results = json.loads(format_prairielearn(CASES[case]()))
    assert results["gradable"] is gradable
    if not gradable:
        assert results["format_errors"] and all(isinstance(e, str) and e for e in results["format_errors"])
    else:
        assert "format_errors" not in results


def test_prairielearn_failing_test_output_shows_input_expected_got() -> None:
    tests = {t["name"]: t for t in json.loads(format_prairielearn(CASES["failed"]()))["tests"]}
    output = tests["stable-softmax / rows-sum-to-one"]["output"]
    assert "smallest failing input: softmax(z=array([1000., 1001.]), axis=-1)" in output
    assert "expected: " in output and "got: " in output
    assert tests["stable-softmax / matches-reference"]["output"] == ""


def test_prairielearn_keeps_hostile_text_plain() -> None:
    text = format_prairielearn(CASES["hostile"]())
    assert "\x1b" not in text and "\\u0000" not in text
    assert "Output of your code (stable-softmax)" in json.loads(text)["output"]
