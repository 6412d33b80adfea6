"""Exercism test-runner results, version 3: required fields, statuses, the 500-character output cap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_report_formats import CASES

from grader.errors import SpecError
from grader.report import render
from grader.report.exercism import MESSAGE_LIMIT, OUTPUT_LIMIT, capped, format_exercism, own_output
from grader.results import CheckResult, ExerciseResult, PrintedOutput, Report
from grader.spec.loader import load_spec_file

ROOT = Path(__file__).resolve().parents[1]
STATUSES = {"pass", "fail", "error"}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_exercism_has_every_required_field(case: str) -> None:
    results = json.loads(format_exercism(CASES[case]()))
    assert results["version"] == 3
    assert results["status"] in STATUSES
    assert isinstance(results["tests"], list)
    if results["status"] == "error":
        assert results["message"]
    else:
        assert results["message"] is None
    allowed = {"name", "status", "message", "test_code", "task_id", "output"}
    for test in results["tests"]:
        assert {"name", "status", "message"} <= set(test) <= allowed
        assert test["status"] in STATUSES and test["name"]
        assert test.get("test_code", "x") and isinstance(test.get("test_code", ""), str)
        assert "task_id" not in test  # no check of these reports names its task
        assert (test["message"] is None) == (test["status"] == "pass")
        assert len(test.get("output", "")) <= OUTPUT_LIMIT
        if results["status"] == "error":  # "error" only when every test errored
            assert test["status"] == "error" and "see above" not in test["message"]


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("passed", "pass"),
        ("public-only", "pass"),
        ("failed", "fail"),
        ("quiz", "fail"),
        ("error", "error"),
        ("missing", "error"),
        ("nothing", "error"),
    ],
    ids=["passed", "public-only", "failed", "quiz", "syntax-error", "missing", "nothing"],
)
def test_exercism_top_level_status(case: str, status: str) -> None:
    assert json.loads(format_exercism(CASES[case]()))["status"] == status


def test_exercism_test_code_is_the_smallest_failing_call() -> None:
    tests = {t["name"]: t for t in json.loads(format_exercism(CASES["failed"]()))["tests"]}
    failing = tests["stable-softmax / rows-sum-to-one"]
    assert failing["status"] == "fail" and failing["test_code"] == "softmax(z=array([1000., 1001.]), axis=-1)"
    assert tests["stable-softmax / order-preserving"]["status"] == "error"
    assert tests["stable-softmax / invariant-to-shift"]["status"] == "error"  # a timeout
    assert tests["stable-softmax / matches-reference"]["output"] == "step 1\nstep 2\n"


def _one_exercise(*checks: CheckResult, status: str = "failed") -> Report:
    exercise = ExerciseResult(id="e", status=status, score=0, max_score=len(checks), reason="r", checks=list(checks))
    return Report(grader_version="0", submission="s", score=0, max_score=len(checks), exercises=[exercise])


def _check(check_id: str, status: str = "failed", **fields: object) -> CheckResult:
    return CheckResult(
        id=check_id, status=status, score=0, max_score=1, visibility="public", reason=f"{check_id}.", **fields
    )  # type: ignore[arg-type]


def test_exercism_task_id_is_the_checks_task_from_its_spec_and_absent_without_one() -> None:
    report = _one_exercise(_check("a", task=2), _check("b"), _check("c", "passed", task=1))
    tests = {t["name"]: t for t in json.loads(format_exercism(report))["tests"]}
    assert tests["e / a"]["task_id"] == 2 and tests["e / c"]["task_id"] == 1
    assert "task_id" not in tests["e / b"]


def test_a_check_spec_names_its_task_and_the_task_is_a_positive_number(tmp_path: Path) -> None:
    text = (ROOT / "exercises/stable-softmax.yaml").read_text(encoding="utf-8")
    marked = text.replace("    property: matches-reference\n", "    property: matches-reference\n    task: 2\n", 1)
    assert marked != text
    (tmp_path / "stable-softmax.yaml").write_text(marked, encoding="utf-8")
    checks = {check.id: check for check in load_spec_file(tmp_path / "stable-softmax.yaml").checks}  # type: ignore[union-attr]
    assert [task for task in (check.task for check in checks.values()) if task is not None] == [2]
    (tmp_path / "stable-softmax.yaml").write_text(marked.replace("task: 2", "task: 0"), encoding="utf-8")
    with pytest.raises(SpecError, match="task"):
        load_spec_file(tmp_path / "stable-softmax.yaml")


def test_exercism_test_code_is_a_call_never_prose() -> None:
    report = _one_exercise(_check("a", input="f(x=1)"), _check("b", "passed", property="f is finite"))
    tests = {t["name"]: t for t in json.loads(format_exercism(report))["tests"]}
    assert tests["e / a"]["test_code"] == "f(x=1)"
    assert "test_code" not in tests["e / b"]


def test_exercism_error_message_names_the_cause() -> None:
    message = json.loads(format_exercism(CASES["error"]()))["message"]
    assert "SyntaxError at line 3" in message


def test_exercism_output_is_capped_at_500_characters_saying_so() -> None:
    assert capped("short\n") == "short\n"
    long = capped("x" * 2000)
    assert len(long) == OUTPUT_LIMIT and long.endswith("Please limit to 500 chars.]")
    exercise = ExerciseResult(id="e", status="failed", score=0, max_score=1, reason="r", output="y" * 900)
    results = json.loads(
        format_exercism(Report(grader_version="0", submission="s", score=0, max_score=1, exercises=[exercise]))
    )
    assert len(results["tests"][0]["output"]) == OUTPUT_LIMIT


def test_exercism_is_deterministic() -> None:
    assert render(CASES["failed"](), "exercism") == render(CASES["failed"](), "exercism")


@pytest.mark.slow
def test_grade_cli_writes_exercism_results(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy as np\n\ndef softmax(z, axis=-1):\n    return np.exp(z) / (\n")
    cases = [("solutions/stable-softmax/wrong_no_max_shift.py", "fail", 1), (str(broken), "error", 1)]
    for path, status, code in cases:
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", "grade", path, "--exercise", "stable-softmax", "--format", "exercism"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        results = json.loads(done.stdout)
        assert results["status"] == status
        if status == "fail":
            assert any(t["status"] == "fail" and t["test_code"].startswith("softmax(z=") for t in results["tests"])
        else:
            assert "SyntaxError" in results["message"]


def test_exercism_output_is_what_the_learner_printed_without_pythons_warnings() -> None:
    printed = (
        "step 1\n"
        "softmax.py:5: RuntimeWarning: overflow encountered in exp\n"
        "  e = np.exp(z)\n"
        "step 2\n"
        "helpers.py:9: DeprecationWarning: old\n"
    )
    assert own_output(printed) == "step 1\nstep 2\n"
    exercise = ExerciseResult(
        id="e", status="failed", score=0, max_score=1, reason="r", output=printed, checks=[_check("a")]
    )
    report = Report(grader_version="0", submission="s", score=0, max_score=1, exercises=[exercise])
    assert json.loads(format_exercism(report))["tests"][0]["output"] == "step 1\nstep 2\n"
    assert own_output("a: Warning: not a file line\n") == "a: Warning: not a file line\n"


def test_exercism_top_level_message_keeps_within_the_interfaces_limit() -> None:
    report = Report(grader_version="0", submission="s", score=0, max_score=0, exercises=[], problems=["p" * 70_000])
    results = json.loads(format_exercism(report))
    assert results["status"] == "error" and len(results["message"]) == MESSAGE_LIMIT


def _printing_exercise(printed: PrintedOutput, *checks: CheckResult) -> Report:
    exercise = ExerciseResult(
        id="e",
        status="failed",
        score=0,
        max_score=len(checks),
        reason="r",
        checks=list(checks),
        output="all of it\n",
        printed=printed,
    )
    return Report(grader_version="0", submission="s", score=0, max_score=len(checks), exercises=[exercise])


def test_exercism_output_is_on_the_test_whose_calls_printed_it() -> None:
    printed = PrintedOutput(imported="loading\n", checks={"c": "z=[1000.]\n"})
    report = _printing_exercise(printed, _check("a", "passed"), _check("b", "passed"), _check("c"))
    tests = {t["name"]: t for t in json.loads(format_exercism(report))["tests"]}
    assert tests["e / a"]["output"] == "loading\n"  # what the import printed stays on the first test
    assert "output" not in tests["e / b"]  # a passing test that printed nothing shows nothing
    assert tests["e / c"]["output"] == "z=[1000.]\n"


def test_exercism_first_test_shows_the_import_then_its_own_calls_output() -> None:
    printed = PrintedOutput(imported="loading", checks={"a": "mine\n"})
    report = _printing_exercise(printed, _check("a"), _check("b"))
    tests = json.loads(format_exercism(report))["tests"]
    assert tests[0]["output"] == "loading\nmine\n" and "output" not in tests[1]


def test_exercism_caps_each_tests_output_and_drops_pythons_warnings_from_it() -> None:
    warned = "softmax.py:5: RuntimeWarning: overflow encountered in exp\n  e = np.exp(z)\n"
    printed = PrintedOutput(checks={"a": "x" * 900, "b": warned + "mine\n", "c": warned})
    report = _printing_exercise(printed, _check("a"), _check("b"), _check("c"))
    tests = json.loads(format_exercism(report))["tests"]
    assert len(tests[0]["output"]) == OUTPUT_LIMIT and tests[0]["output"].endswith("Please limit to 500 chars.]")
    assert tests[1]["output"] == "mine\n" and "output" not in tests[2]


LEARNER_WHO_PRINTS = """\
import numpy as np

print("loading my softmax")


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if np.isinf(z).any():
        print("an infinite score:", z.tolist(), "x" * 600)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


@pytest.mark.slow
def test_grade_cli_puts_each_checks_output_on_its_own_test(tmp_path: Path) -> None:
    """Graded for real: the function prints for infinite scores only, which one check sends."""
    learner = tmp_path / "printing.py"
    learner.write_text(LEARNER_WHO_PRINTS)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "grade",
            str(learner),
            "--exercise",
            "stable-softmax",
            "--format",
            "exercism",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    tests = json.loads(done.stdout)["tests"]
    shown = {t["name"].split(" / ")[1]: t.get("output") for t in tests}
    assert shown.pop(tests[0]["name"].split(" / ")[1]) == "loading my softmax\n"
    printing = {name: output for name, output in shown.items() if output}
    assert list(printing) == ["neg-inf-gets-zero"]  # the one check with infinite scores, not the first test
    assert printing["neg-inf-gets-zero"].startswith("an infinite score: [")
    assert len(printing["neg-inf-gets-zero"]) == OUTPUT_LIMIT  # it printed over 600 characters per call
    assert all(t["status"] == "pass" for t in tests)
