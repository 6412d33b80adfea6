"""Class entries: scripts of steps run in the learner process, kept values judged as fields, steps named in reasons.

The fixture exercise (tests/fixtures/classes) is graded in process (``tests.fakes``); the slow tests run
``grader validate`` and ``grader grade`` on it with the real sandbox, as an author and a learner would.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.authoring.handout import stub
from grader.checks.base import Call, Finding
from grader.cli import main
from grader.engine.defaults import judge_defaults
from grader.engine.instructor_runs import answers_file, read_answers_file
from grader.engine.memory import GradingMemo
from grader.engine.plan import build_plan
from grader.engine.plan_data import plan_data, plan_from_data
from grader.errors import SpecError
from grader.record.plain import from_plain, to_plain
from grader.sandbox import child
from grader.sandbox.arguments import decode_arguments
from grader.sandbox.calls import encode_calls
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.scripts import Script, ScriptFailure, Step, run_script
from grader.spec.loader import load_catalog, load_spec_file
from grader.spec.models import Spec
from tests.grading_helpers import grade_in_process

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "classes"
SPEC = FIXTURES / "exercises" / "running-mean.yaml"


def _grade(name: str) -> dict[str, Any]:
    folder = "learners" if (FIXTURES / "learners" / name).exists() else "solutions/running-mean"
    return grade_in_process(FIXTURES, "running-mean", (FIXTURES / folder / name).read_text())


def _exercise() -> Any:
    return load_catalog(FIXTURES / "exercises").exercise("running-mean")


def test_the_reference_class_passes_every_check() -> None:
    checks = _grade("reference.py")
    assert checks and {check.status for check in checks.values()} == {"passed"}


@pytest.mark.parametrize(
    ("learner", "check", "status", "shown"),
    [
        (
            "wrong_forgets_state.py",
            "mean-matches",
            "failed",
            "RunningMean(window=2), then update(x=1.0), then update(x=2.0), then update(x=6.0), then mean",
        ),
        ("wrong_count.py", "mean-matches", "failed", "RunningMean(window=3), then update(x=-4.0), then mean"),
        (
            "raises_late.py",
            "refuses-nan",
            "error",
            "got RunningMean(), then update(x=2.0), then update(x=nan): raised nothing",
        ),
        (
            "shared_state.py",
            "count-matches",
            "failed",
            "then update(x=6.0), then mean (kept as m), then count (kept as n)",
        ),
        (
            "named_add.py",
            "mean-matches",
            "error",
            "got RunningMean(), then update(x=1000000000.0) raised AttributeError",
        ),
        ("huge.py", "mean-matches", "error", "then update(x=1000000001.0), then mean returned"),
        ("returns_none.py", "mean-matches", "error", "then update(x=1000000001.0), then mean returned None"),
    ],
    ids=[
        "forgets-state",
        "divides-by-window",
        "raises-late",
        "shared-class-state",
        "no-such-method",
        "huge-value",
        "keeps-none",
    ],
)
def test_a_wrong_class_loses_points_with_a_reason_naming_the_step(
    learner: str, check: str, status: str, shown: str
) -> None:
    checks = _grade(learner)
    assert checks[check].status == status, checks[check].reason
    assert checks[check].score == 0 < checks[check].max_score
    assert shown in checks[check].reason


def test_raising_late_expects_the_exception_at_its_step() -> None:
    check = _grade("raises_late.py")["refuses-nan"]
    assert check.expected == "update to raise ValueError"
    assert _grade("raises_late.py")["mean-matches"].status == "passed"  # only the checks it breaks


def test_a_script_keeps_each_value_as_it_was_when_read() -> None:
    class Grows:
        def __init__(self) -> None:
            self.values = np.zeros(2)

        def bump(self) -> None:
            self.values += 1

    steps = [
        {"op": "new", "name": "", "args": {}},
        {"op": "read", "name": "values", "args": {}, "keep": "before"},
        {"op": "call", "name": "bump", "args": {}},
        {"op": "read", "name": "values", "args": {}, "keep": "after"},
    ]
    kept = run_script(Grows, steps)
    assert kept["before"].tolist() == [0.0, 0.0] and kept["after"].tolist() == [1.0, 1.0]


def test_an_expected_exception_matches_its_subclasses_and_nothing_else() -> None:
    class Strict:
        def check(self, x: float) -> None:
            if x < 0:
                raise ZeroDivisionError("negative")  # an ArithmeticError

    new = {"op": "new", "name": "", "args": {}}
    raises = {"op": "call", "name": "check", "args": {"x": -1.0}, "raises": "ArithmeticError", "keep": "r"}
    assert run_script(Strict, [new, raises]) == {"r": "ZeroDivisionError"}
    with pytest.raises(ScriptFailure) as caught:
        run_script(Strict, [new, dict(raises, args={"x": 1.0})])
    assert caught.value.step == 1 and caught.value.cause is None
    with pytest.raises(ScriptFailure) as caught:
        run_script(Strict, [new, dict(raises, raises="ValueError")])
    assert isinstance(caught.value.cause, ZeroDivisionError)


def test_a_script_crosses_the_wire_with_its_arrays_and_its_failing_step_comes_back() -> None:
    exercise = _exercise()
    plan = build_plan(exercise, list(exercise.checks))
    script_call = plan.table.calls[0]
    batch = encode_calls([script_call])
    (steps,), _ = decode_arguments(batch.calls[0], batch.blobs)
    assert [step["op"] for step in steps][:2] == ["new", "call"]

    class Broken:
        def __init__(self, window: Any = None) -> None:
            pass

    header, _ = child.run_call(type("M", (), {"RunningMean": Broken}), 0, batch.calls[0], lambda: ([steps], {}), ".")
    assert header["ok"] is False and header["error"]["step"] == 1 and header["error"]["type"] == "AttributeError"


def test_a_plan_of_scripts_reads_back_from_its_plain_data() -> None:
    exercise = _exercise()
    checks = list(exercise.checks)
    plan = build_plan(exercise, checks)
    again = plan_from_data(json.loads(json.dumps(plan_data(plan))), exercise, checks)
    assert [encode_calls([c]).key for c in again.table.calls] == [encode_calls([c]).key for c in plan.table.calls]


def test_the_handout_stub_is_a_class_skeleton_with_its_methods() -> None:
    catalog = load_catalog(FIXTURES / "exercises")
    text = stub(_exercise(), catalog)
    namespace: dict[str, Any] = {}
    exec(compile(text, "stub", "exec"), namespace)  # noqa: S102 - the stub this test just wrote
    cls = namespace["RunningMean"]
    assert {"update", "mean", "count"} <= set(vars(cls)) and isinstance(vars(cls)["mean"], property)
    with pytest.raises(NotImplementedError, match="write RunningMean"):
        cls(window=3)
    checks = grade_in_process(FIXTURES, "running-mean", text)
    assert "RunningMean() raised NotImplementedError: write RunningMean" in checks["mean-matches"].reason


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = SPEC.read_text()
    assert old in text, old
    path = tmp_path / "exercises" / "running-mean.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "marker", "expected"),
    [
        (
            "- call: update\n            args: {x: 1.0e9}",
            "- call: updat\n            args: {x: 1.0e9}",
            "call: updat",
            "did you mean 'update'",
        ),
        ("args: {x: 1.0e9}", "args: {y: 1.0e9}", "{y: 1.0e9}", "'y' is not an argument of update(...)"),
        (
            "- read: count\n            keep: n\n        - - new: {window: 2}",
            "- read: cnt\n            keep: n\n        - - new: {window: 2}",
            "cnt",
            "did you mean 'count'",
        ),
        (
            "          - read: count\n            keep: n\n        - - new: {window: 2}",
            "        - - new: {window: 2}",
            None,
            "keeps no 'n'",
        ),
        ("new: {window: 2}", "new: {size: 2}", "new: {size: 2}", "'size' is not an argument of RunningMean(...)"),
        ("    kind: class\n", "", None, "a function has no methods"),
        (
            "    description: count is the number of values the mean covers\n",
            "",
            None,
            "say what it judges in description:",
        ),
        (
            "          - read: mean\n            keep: m\n          - read: count",
            "          - read: mean\n            call: update\n          - read: count",
            None,
            "a step does one thing",
        ),
    ],
    ids=[
        "unknown-method",
        "unknown-argument",
        "unknown-attribute",
        "value-not-kept",
        "constructor-argument",
        "not-a-class",
        "no-description",
        "two-actions",
    ],
)
def test_a_class_spec_mistake_is_one_line_with_file_and_line(
    tmp_path: Path, old: str, new: str, marker: str | None, expected: str
) -> None:
    path = _broken(tmp_path, old, new)
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and "\n" not in message
    assert expected in message
    if marker:
        line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.rstrip().endswith(marker))
        assert caught.value.line == line


@pytest.mark.slow
def test_the_fixture_validates_with_the_real_sandbox(tmp_path: Path) -> None:
    root = tmp_path / "classes"
    shutil.copytree(FIXTURES, root)
    result = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "validate"])
    assert result.exit_code == 0, result.output
    assert "passes all 4 checks" in result.output


@pytest.mark.slow
def test_a_class_that_hangs_in_its_constructor_is_a_timeout_not_a_hang(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["--exercises", str(FIXTURES / "exercises"), "grade", str(FIXTURES / "learners" / "hang_init.py")],
    )
    assert result.exit_code == 1, result.output
    assert "TIMEOUT mean-matches" in result.output and "Total: 0/4" in result.output


@pytest.mark.slow
def test_the_worked_example_of_the_docs_validates(tmp_path: Path) -> None:
    """docs/authoring.md's class spec, with the fixture's solutions, passes ``grader validate`` as written."""
    doc = (Path(__file__).resolve().parents[1] / "docs/authoring.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL) if b.startswith("id: running-mean\n")
    )
    root = tmp_path / "classes"
    shutil.copytree(FIXTURES, root)
    (root / "exercises" / "running-mean.yaml").write_text(block)
    result = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "validate"])
    assert result.exit_code == 0, result.output


def test_a_class_spec_reads_back_from_the_spec_cache_as_written() -> None:
    spec = load_spec_file(SPEC)
    again = from_plain(json.loads(json.dumps(to_plain(spec))), Spec)
    assert again.entries == spec.entries and again.cases["streams"] == spec.cases["streams"]  # type: ignore[union-attr]


def test_a_handout_answers_file_keeps_the_names_of_kept_values(tmp_path: Path) -> None:
    exercise = _exercise()
    plan = build_plan(exercise, list(exercise.checks))
    number = plan.table.numbers("reference")[0]
    values: list[Any] = [np.float64(2.5), np.int64(2)]
    kept = CallOutcome(status="ok", values=values, kind="mapping", types=["float", "int"], keys=["m", "n"])
    path = tmp_path / "answers.json"
    path.write_text(answers_file(plan, {number: kept}))
    (read,) = read_answers_file(path, GradingMemo()).values()
    assert read.keys == ["m", "n"] and read.value == {"m": 2.5, "n": 2}


@pytest.mark.slow
def test_a_released_handout_grades_a_class_against_its_reference_answers(tmp_path: Path) -> None:
    root, out = tmp_path / "classes", tmp_path / "handout"
    shutil.copytree(FIXTURES, root)
    released = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "release", "--out", str(out)])
    assert released.exit_code == 0, released.output
    assert "class RunningMean:" in (out / "running-mean.md").read_text()
    wrong = out / "mine.py"
    shutil.copy(FIXTURES / "solutions/running-mean/wrong_count.py", wrong)
    result = CliRunner().invoke(main, ["--exercises", str(out / "public-checks"), "grade", str(wrong), "--public"])
    assert result.exit_code == 1, result.output
    assert "expected: m: -4" in result.output and "got: m: -1.33333" in result.output


@pytest.mark.parametrize(("new", "said"), [((), True), ((("window", 3),), False)], ids=["left-out", "given"])
def test_a_constructor_default_is_named_only_where_the_script_left_it_out(new: tuple[Any, ...], said: bool) -> None:
    script = Script((Step("new", "", new), Step("read", "mean", (), "m")))
    verdict = judge_defaults(
        Finding(got="m: 4", expected="m: 3"),
        entry="RunningMean",
        signature="RunningMean(window=None)",
        learner={"window": "2"},
        calls=[Call("RunningMean", {"script": script})],
        outcomes=[],
    )
    assert bool(verdict.said) is said
