"""identity (relations from YAML) and the general properties on a whole exercise, through the in-process engine."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from grader.checks.base import Call
from grader.checks.cases import Case
from grader.checks.expressions import ExpressionError, parse_relation
from grader.checks.identity import Identity
from grader.checks.registry import CheckSpec
from grader.cli import main
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.errors import SpecError
from grader.record.validation import adapter
from grader.sandbox.outcomes import CallOutcome
from grader.spec.loader import load_catalog
from tests.fakes import InProcessFactory

SPEC = """\
id: relatives
kind: implementation
title: Sigmoid and logsumexp
prompt: Write sigmoid(x) and logsumexp(z, axis=-1).
entries:
  sigmoid:
    signature: sigmoid(x)
    args: {x: float_array}
  logsumexp:
    signature: logsumexp(z, axis=-1)
    args: {z: float_array, axis: int}
cases:
  basic:
    - examples:
        - {x: [0.0, 1.0, -1.0, 2.0]}
        - {x: [710.0, 745.0, -800.0, 30.0]}
  rows:
    - examples:
        - {z: [[0.0, 1.0], [2.0, 3.0]]}
checks:
  - {id: between-zero-and-one, property: in-range, low: 0.0, high: 1.0, cases: [basic]}
  - {id: increasing, property: monotone, strict: true, cases: [basic]}
  - {id: symmetric, property: identity, relation: "sigmoid(-x) == 1 - sigmoid(x)", cases: [basic]}
  - id: shift-adds
    property: identity
    entry: logsumexp
    relation: "logsumexp(z + c) == logsumexp(z) + c"
    where: {c: [1000.0, -1000.0]}
    cases: [rows]
  - {id: at-least-max, property: identity, entry: logsumexp, relation: "logsumexp(z) >= max(z, axis=-1)", cases: [rows]}
  - {id: no-overflow-on-the-way, property: no-float-warnings, cases: [basic]}
"""

STABLE = (
    "import numpy as np\n\n\ndef sigmoid(x):\n    return np.exp(-np.logaddexp(0.0, -x))\n\n\n"
    "def logsumexp(z, axis=-1):\n    m = np.max(z, axis=axis, keepdims=True)\n"
    "    return np.squeeze(m, axis) + np.log(np.sum(np.exp(z - m), axis=axis))\n"
)
NAIVE = (
    "import numpy as np\n\n\ndef sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n\n\n"
    "def logsumexp(z, axis=-1):\n    return np.log(np.sum(np.exp(z), axis=axis))\n"
)
CLIPPED = (
    "import numpy as np\n\n\ndef sigmoid(x):\n"
    "    return np.clip(1 / (1 + np.exp(-np.clip(x, -30, 30))), 0.0, 1.0)\n\n\n"
    "def logsumexp(z, axis=-1):\n    return np.max(z, axis=axis) - 1e-3\n"
)


def _grade(tmp_path: Path, source: str, spec: str = SPEC) -> dict[str, Any]:
    (tmp_path / "exercises").mkdir(exist_ok=True)
    (tmp_path / "exercises" / "relatives.yaml").write_text(spec)
    exercise = load_catalog(tmp_path / "exercises").exercise("relatives")
    result = grade_implementation(
        exercise,  # type: ignore[arg-type]
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
    )
    return {check.id: check for check in result.checks}


def test_a_stable_solution_passes_every_general_property(tmp_path: Path) -> None:
    checks = _grade(tmp_path, STABLE)
    assert {name: check.status for name, check in checks.items()} == dict.fromkeys(checks, "passed")


def test_a_naive_solution_fails_the_shift_and_the_float_warnings(tmp_path: Path) -> None:
    checks = _grade(tmp_path, NAIVE)
    assert checks["shift-adds"].status == "failed"
    reason = checks["shift-adds"].reason
    assert "logsumexp(z=array([[0., 1.], [2., 3.]]))" in reason
    assert "logsumexp(z + c) == logsumexp(z) + c with c=1000 (rtol 1e-09, atol 1e-12)" in reason
    assert "left side array([inf, inf]), right side array([1001.313262, 1003.313262])" in reason
    assert checks["no-overflow-on-the-way"].status == "failed"
    assert "exp overflowed" in checks["no-overflow-on-the-way"].reason
    assert checks["symmetric"].status == "passed"


def test_a_plateau_and_a_shifted_bound_are_caught(tmp_path: Path) -> None:
    checks = _grade(tmp_path, CLIPPED)
    assert checks["increasing"].status == "failed"
    assert "the same value, 0.9999999999999065, at x=30 and at x=710" in checks["increasing"].reason
    assert checks["at-least-max"].status == "failed"
    assert "(atol 1e-12)" in checks["at-least-max"].reason


def _spec_with(relation: str, extra: str = "") -> str:
    return SPEC.replace('relation: "sigmoid(-x) == 1 - sigmoid(x)"', f"relation: {relation!r}{extra}")


RELATION_LINE = 1 + SPEC.splitlines().index(next(line for line in SPEC.splitlines() if "id: symmetric" in line))


@pytest.mark.parametrize(
    ("relation", "message"),
    [
        ("__import__('os').system('true') == sigmoid(x)", "can be called"),
        ("().__class__ == sigmoid(x)", "dot"),
        ("sigmoid(x).__dict__ == 1", "dot"),
        ("sigmoid(x) == (lambda: 1)()", "can be called"),
        ("sigmoid(x) == [a for a in x]", "comprehension"),
        ("sigmoid(x) == 10**10**10", "exponent"),
        ("sigmoid(x) == x" + " + x" * 200, "characters long"),
        ("sigmoid(y) == 1", "reads 'y', which is neither an argument of sigmoid nor a where variable"),
        ("sigmod(x) == 1", "did you mean 'sigmoid'"),
        ("sigmoid(x, 2) == 1", "with 2 arguments; it takes 1"),
        ("logsumexp(x, axs=0) == 1", "did you mean 'axis'"),
        ("logsumexp(axis=0) == 1", "without z"),
        ("sigmoid(sigmoid(x)) == 1", "inside the arguments"),
        ("reference.softmax(x, axis=0) == sigmoid(x)", "pass its arguments by position"),
    ],
    ids=[
        "import",
        "class",
        "dict",
        "lambda",
        "comprehension",
        "huge-power",
        "long",
        "unbound-name",
        "unknown-entry",
        "too-many-arguments",
        "unknown-keyword",
        "missing-argument",
        "nested-call",
        "reference-keywords",
    ],
)
def test_a_bad_relation_is_a_spec_error_at_its_line(tmp_path: Path, relation: str, message: str) -> None:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "relatives.yaml").write_text(_spec_with(relation))
    with pytest.raises(SpecError) as raised:
        load_catalog(tmp_path / "exercises")
    assert raised.value.line == RELATION_LINE
    assert message in raised.value.message


def test_where_is_bounded_and_named_plainly(tmp_path: Path) -> None:
    (tmp_path / "exercises").mkdir()
    cases = [("{__x: [1.0]}", "not a variable name"), ("{c: []}", "no values"), ("{c: [a]}", "not a number")]
    for where, message in cases:
        (tmp_path / "exercises" / "relatives.yaml").write_text(_spec_with("sigmoid(x) == 1", f", where: {where}"))
        with pytest.raises(SpecError, match=message):
            load_catalog(tmp_path / "exercises")


def _ok(value: Any) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.asarray(value, dtype=float)], types=["ndarray"])


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_reference_calls_are_planned_for_the_reference_and_judged_on_its_answers() -> None:
    """The reference's answers come from a stand-in here (the engine side that answers them is not this check's)."""
    check = Identity(
        id="via-softmax",
        property="identity",
        relation="sigmoid(x) == reference.softmax(stack([x, zeros_like(x)], axis=-1))[..., 0]",
    )
    x = np.array([-2.0, 0.0, 3.0])
    calls = check.plan_in(Case(args={"x": x}), "sigmoid", {"sigmoid": {"x": "float_array"}})
    assert [(c.function, c.on, list(c.args)) for c in calls] == [
        ("sigmoid", "learner", ["x"]),
        ("sigmoid", "learner", ["x"]),
        ("softmax", "reference", ["#0"]),
    ]
    np.testing.assert_array_equal(calls[2].args["#0"], np.stack([x, np.zeros(3)], axis=-1))

    def answer(call: Call, sigmoid: Any) -> CallOutcome:
        return _ok(sigmoid(call.args["x"]) if call.on == "learner" else _softmax(call.args["#0"]))

    right = [answer(c, lambda v: 1 / (1 + np.exp(-v))) for c in calls]
    assert check.judge(Case(args={"x": x}), right) is None
    wrong = [answer(c, lambda v: 1 / (1 + np.exp(v))) for c in calls]
    finding = check.judge(Case(args={"x": x}), wrong)
    assert finding is not None and finding.expected.startswith(check.relation)


def test_entry_arguments_are_named_by_the_entrys_parameters() -> None:
    check = Identity(id="i", property="identity", relation="logsumexp(z, -1) == sigmoid(z)[..., 0]")
    calls = check.plan_in(
        Case(args={"z": np.zeros((1, 2))}),
        "logsumexp",
        {"logsumexp": {"z": "float_array", "axis": "int"}, "sigmoid": {"x": "float_array"}},
    )
    assert [(c.function, dict.fromkeys(c.args)) for c in calls[1:]] == [
        ("logsumexp", {"z": None, "axis": None}),
        ("sigmoid", {"x": None}),
    ]
    assert calls[1].args["axis"] == -1


def test_the_call_shown_is_one_the_relation_makes() -> None:
    # The relation never calls the check's entry (sqrt_of) on the case's own arguments: the input shown, and
    # the first call planned, is the relation's own call of steps_of, never a call nothing judges.
    check = Identity(id="i", property="identity", relation="steps_of(a, 1e-3) >= steps_of(a, 1e-1)")
    parameters = {"sqrt_of": {"a": "float"}, "steps_of": {"a": "float", "tol": "float"}}
    calls = check.plan_in(Case(args={"a": np.array(2.0)}), "sqrt_of", parameters)
    assert calls[0].function == "steps_of" and calls[0].args == calls[1].args
    assert all(call.function == "steps_of" for call in calls)
    same = Identity(id="j", property="identity", relation="f(x) == 1 - f(-x)")
    calls = same.plan_in(Case(args={"x": np.array([1.0])}), "f", {"f": {"x": "float_array"}})
    assert calls[0].function == "f" and calls[0].args["x"] is not None  # the entry's own call, made by the relation
    assert np.array_equal(calls[0].args["x"], [1.0])


def test_a_given_function_is_shown_with_its_own_parameters() -> None:
    from grader.checks.display import format_value
    from grader.sandbox.calls import TrustedFunction

    line = TrustedFunction("line", (("m", np.array(-2.0)), ("c", np.array(0.5))))
    assert format_value(line) == "line(m=-2, c=0.5)"
    assert format_value(TrustedFunction("softmax")) == "softmax"


@pytest.mark.parametrize(
    ("relation", "left", "right", "holds"),
    [
        ("f(x) == f(x)", [1.0, np.nan], [1.0, np.nan], True),
        ("f(x) == f(x)", [1.0], [1.0 + 1e-8], False),
        ("f(x) <= f(x)", [1.0 + 1e-13], [1.0], True),
        ("f(x) <= f(x)", [1.0 + 1e-9], [1.0], False),
        ("f(x) < f(x)", [1.0], [1.0], False),
        ("f(x) == f(x)", [1.0, 1.0], [[1.0, 1.0]], False),
        ("f(x) == 1", [1.0, 1.0], [0.0], True),
    ],
    ids=["nan-equal", "outside-rtol", "atol-slack", "beyond-slack", "strict", "shapes", "scalar-side"],
)
def test_comparisons_use_their_tolerances(relation: str, left: list[Any], right: list[Any], holds: bool) -> None:
    check = Identity(id="i", property="identity", relation=relation)
    outcomes = [_ok([0.0]), _ok(left), _ok(right)]
    assert (check.judge(Case(args={"x": np.zeros(1)}), outcomes) is None) is holds


@pytest.mark.slow
def test_a_real_learner_process_reports_the_line_that_overflowed(tmp_path: Path) -> None:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "relatives.yaml").write_text(SPEC)
    (tmp_path / "mine.py").write_text(NAIVE)
    result = CliRunner().invoke(
        main, ["--exercises", str(tmp_path / "exercises"), "grade", str(tmp_path / "mine.py"), "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    checks = {check["id"]: check for check in json.loads(result.output)["exercises"][0]["checks"]}
    assert "exp overflowed at mine.py line 5: return 1 / (1 + np.exp(-x))" in checks["no-overflow-on-the-way"]["reason"]
    assert checks["shift-adds"]["status"] == "failed"
    assert checks["symmetric"]["status"] == "passed"


def test_monotone_names_an_argument_the_entry_has(tmp_path: Path) -> None:
    (tmp_path / "exercises").mkdir()
    spec = SPEC.replace("property: monotone, strict: true", "property: monotone, arg: xx, strict: true")
    (tmp_path / "exercises" / "relatives.yaml").write_text(spec)
    with pytest.raises(SpecError, match="'xx' is not an argument of sigmoid; did you mean 'x'"):
        load_catalog(tmp_path / "exercises")


def test_a_tuple_where_an_array_is_expected_is_said_plainly() -> None:
    check = Identity(id="i", property="identity", relation="f(x) == 1")
    pair = CallOutcome(status="ok", values=[np.zeros(1), np.zeros(1)], kind="tuple", types=["ndarray", "ndarray"])
    finding = check.judge(Case(args={"x": np.zeros(1)}), [_ok([0.0]), pair])
    assert finding is not None and finding.got == "a tuple of 2 values" and finding.expected == "one array"


def test_the_relations_shown_in_the_authoring_guide_are_valid_checks() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "authoring.md").read_text(encoding="utf-8")
    block = re.search(r"### Relations \(`identity`\)\n\n```\n(.*?)```", doc, flags=re.DOTALL)
    assert block is not None
    checks = yaml.safe_load(block.group(1))
    assert len(checks) == 3
    for check in checks:
        adapter(CheckSpec).validate_python(check)


def test_a_relation_calling_the_reference_needs_one_and_names_only_its_functions(tmp_path: Path) -> None:
    relation = "sigmoid(x) == reference.softmax(stack([x, zeros_like(x)], axis=-1))[..., 0]"
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "relatives.yaml").write_text(_spec_with(relation))
    with pytest.raises(SpecError) as raised:  # no reference_solution to answer reference.softmax
        load_catalog(tmp_path / "exercises")
    assert "names no reference_solution" in raised.value.message
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "reference.py").write_text(
        "def sigmoid(x):\n    return x\n\n\ndef softmaks(z):\n    return z\n"
    )
    spec = _spec_with(relation) + "reference_solution: solutions/reference.py\n"
    (tmp_path / "exercises" / "relatives.yaml").write_text(spec)
    with pytest.raises(SpecError) as raised:  # a misspelt function is named at load, at its line
        load_catalog(tmp_path / "exercises")
    assert "'softmax', which solutions/reference.py does not define" in raised.value.message
    assert raised.value.line == RELATION_LINE


def test_none_may_be_given_to_an_entry_but_is_no_number() -> None:
    relation = parse_relation("attention_weights(Q, K) == attention_weights(Q, K, None)")
    assert [site.function for site in relation.calls] == ["attention_weights", "attention_weights"]
    with pytest.raises(ExpressionError, match="the constant None is not allowed"):
        parse_relation("f(x) == f(x) + None")


NEWTON = """\
id: newton
kind: implementation
title: Newton's square root
prompt: Write newton_sqrt(a, x0=1.0), returning (root, iterations).
entries:
  newton_sqrt:
    signature: newton_sqrt(a, x0=1.0)
    args: {a: float, x0: float}
cases:
  positive:
    - examples:
        - {a: 2.0}
        - {a: 10.0}
        - {a: 1.0e+6}
checks:
  - {id: squares-back, property: identity, relation: "newton_sqrt(a)[0] ** 2 == a", cases: [positive]}
  - {id: few-iterations, property: identity, relation: "newton_sqrt(a)[1] <= 2 * 30", cases: [positive]}
  - {id: not-a-tuple, property: identity, relation: "newton_sqrt(a) >= 0", cases: [positive]}
"""


def _grade_newton(tmp_path: Path, source: str) -> dict[str, Any]:
    (tmp_path / "exercises").mkdir(exist_ok=True)
    (tmp_path / "exercises" / "newton.yaml").write_text(NEWTON)
    exercise = load_catalog(tmp_path / "exercises").exercise("newton")
    result = grade_implementation(
        exercise,  # type: ignore[arg-type]
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
    )
    return {check.id: check for check in result.checks}


def test_a_relation_takes_apart_the_tuple_a_call_returns_when_it_indexes_the_call(tmp_path: Path) -> None:
    source = (
        "def newton_sqrt(a, x0=1.0):\n    x, k = x0, 0\n    while abs(x * x - a) > 1e-12 * a:\n"
        "        x, k = (x + a / x) / 2, k + 1\n    return x, k\n"
    )
    checks = _grade_newton(tmp_path, source)
    assert checks["squares-back"].status == "passed"
    assert checks["few-iterations"].status == "passed"
    assert checks["not-a-tuple"].status == "failed"
    assert checks["not-a-tuple"].got == "a tuple of 2 values"
    slow = source.replace("(x + a / x) / 2", "x - (x * x - a) / (4 * x)")
    failed = _grade_newton(tmp_path, slow)["few-iterations"]
    assert failed.status == "failed"
    assert "left side" in failed.got and "right side 60" in failed.got
