"""converges-at-order, and the linear-algebra relations, on whole exercises (tests/fixtures/linalg).

The fast tests grade in process (``tests.fakes``); the slow one runs ``grader
validate`` on the fixtures, as an author would: each reference passes every
check and each known-wrong solution is caught by the checks it names.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.checks.cases import Case
from grader.checks.convergence import ConvergesAtOrder, estimated_order
from grader.cli import main
from grader.errors import SpecError
from grader.spec.loader import load_catalog
from tests.grading_helpers import grade_in_process

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "linalg"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "linalg")
    return tmp_path / "linalg"


def _grade(root: Path, exercise_id: str, source: str) -> dict[str, Any]:
    return grade_in_process(root, exercise_id, source)


def _solution(name: str) -> str:
    return (FIXTURES / "solutions" / name).read_text()


def test_the_trapezoid_reference_shows_order_two_and_passes(tmp_path: Path) -> None:
    checks = _grade(_copy(tmp_path), "trapezoid-rule", _solution("trapezoid-rule/reference.py"))
    assert {name: check.status for name, check in checks.items()} == dict.fromkeys(checks, "passed")


def test_a_left_riemann_sum_is_first_order_and_the_reason_shows_its_errors(tmp_path: Path) -> None:
    check = _grade(_copy(tmp_path), "trapezoid-rule", _solution("trapezoid-rule/wrong_left_sum.py"))["second-order"]
    assert check.status == "failed"
    assert check.input == "trapezoid(f=sine, a=0, b=1, n=8)"
    assert check.got.startswith("errors 0.0531907, 0.0264456, 0.0131854, 0.00658334, 0.00328933 at n = 8, 16, 32")
    assert check.got.endswith("estimated order 1.00")
    assert check.expected == "order 2 within 0.2"


def test_a_result_exact_to_round_off_shows_no_order(tmp_path: Path) -> None:
    exact = "import numpy as np\n\n\ndef trapezoid(f, a, b, n):\n    return float(np.cos(a) - np.cos(b))\n"
    check = _grade(_copy(tmp_path), "trapezoid-rule", exact)["second-order"]
    assert check.status == "failed"
    assert "too few above round-off" in check.got


def test_a_call_that_raises_is_named_as_it_was_made(tmp_path: Path) -> None:
    """The check varies n from the case's 8; the call at n=32 raised, and the reason says so, not n=8."""
    source = (
        "import numpy as np\n\n\ndef trapezoid(f, a, b, n):\n    if n > 16:\n"
        "        raise ValueError('too many points')\n"
        "    x = np.linspace(a, b, n + 1)\n    y = f(x)\n"
        "    return float((b - a) / n * (y.sum() - (y[0] + y[-1]) / 2))\n"
    )
    check = _grade(_copy(tmp_path), "trapezoid-rule", source)["second-order"]
    assert check.status == "error"
    assert check.input == "trapezoid(f=sine, a=0, b=1, n=8)"
    assert "trapezoid(f=sine, a=0, b=1, n=32) raised ValueError: too many points" in check.got


def test_a_reference_that_raises_on_a_relation_call_is_named_on_that_call(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    reference = root / "solutions/trapezoid-rule/reference.py"
    reference.write_text(
        reference.read_text().replace(
            "    x = np.linspace", "    if n == 1:\n        raise ValueError('n')\n    x = np.linspace"
        )
    )
    spec = root / "exercises/trapezoid-rule.yaml"
    spec.write_text(
        spec.read_text().replace(
            '"trapezoid(f, a, b, 1) == (b - a) * (sin(a) + sin(b)) / 2"',
            '"trapezoid(f, a, b, 2 * n - 15) == reference.trapezoid(f, a, b, 2 * n - 15)"',
        )
    )
    check = _grade(root, "trapezoid-rule", _solution("trapezoid-rule/reference.py"))["exact-on-one-interval"]
    assert check.status == "error"
    # The relation's own call is the one shown (trapezoid(n=8) is never asked): the reference failed on it.
    assert "raised ValueError: n in trapezoid() on trapezoid(f=sine, a=0, b=1, n=1)." in check.reason


def test_gram_schmidt_relations_hold_for_any_number_of_columns(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    checks = _grade(root, "gram-schmidt", _solution("gram-schmidt/reference.py"))
    assert {name: check.status for name, check in checks.items()} == dict.fromkeys(checks, "passed")
    classical = _grade(root, "gram-schmidt", _solution("gram-schmidt/wrong_classical.py"))
    assert classical["orthonormal-columns"].status == "passed"
    assert classical["stays-orthonormal-on-hilbert"].status == "failed"
    assert classical["stays-orthonormal-on-hilbert"].input.startswith("orthonormalise(A=array([[1., 0.5")


@pytest.mark.parametrize(
    ("values", "errors", "growing", "order"),
    [
        ([8, 16, 32], [1.0 / 64, 1.0 / 256, 1.0 / 1024], True, 2.0),
        ([0.1, 0.05, 0.025], [1e-3, 1.25e-4, 1.5625e-5], False, 3.0),
        ([8, 16, 32, 64], [1e-4, 2.5e-5, 1e-16, 1e-16], True, 2.0),
    ],
    ids=["n-doubling", "h-halving", "round-off-left-out"],
)
def test_estimated_order_is_the_slope_of_the_log_errors(
    values: list[Any], errors: list[float], growing: bool, order: float
) -> None:
    assert estimated_order(values, errors, 1e-12, growing) == pytest.approx(order)


def test_values_stay_integers_for_an_integer_argument_and_refine_a_step_size() -> None:
    check = ConvergesAtOrder(id="o", property="converges-at-order", arg="n", exact="1.0", order=2, steps=3)
    assert check.values(Case(args={"n": 8})) == [8, 16, 32]
    assert all(type(v) is int for v in check.values(Case(args={"n": 8})))
    step = ConvergesAtOrder(id="o", property="converges-at-order", arg="h", exact="1.0", order=1, ratio=0.5)
    assert step.values(Case(args={"h": 0.1})) == pytest.approx([0.1, 0.05, 0.025, 0.0125])
    with pytest.raises(SpecError, match="gives no n"):
        check.values(Case(args={}))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("arg: n", "arg: m"),
        ('exact: "cos(a) - cos(b)"', 'exact: "cos(a) - cos(n)"'),
        ('exact: "cos(a) - cos(b)"', 'exact: "cos(a) - trapezoid(f, a, b, 4)"'),
        ("ratio: 2", "ratio: 1"),
    ],
    ids=["unknown-arg", "exact-reads-the-varied-arg", "exact-calls-an-entry", "ratio-one"],
)
def test_a_bad_convergence_check_is_a_spec_error_at_its_line(tmp_path: Path, old: str, new: str) -> None:
    root = _copy(tmp_path)
    spec = root / "exercises/trapezoid-rule.yaml"
    text = spec.read_text()
    spec.write_text(text.replace(old, new))
    line = 1 + next(i for i, row in enumerate(text.splitlines()) if row.strip() == old.strip())
    with pytest.raises(SpecError) as raised:
        load_catalog(root / "exercises")
    assert raised.value.line == line


@pytest.mark.slow
def test_validate_passes_the_references_and_catches_the_known_wrong_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["--exercises", "exercises", "validate"])
    assert result.exit_code == 0, result.output
    assert "trapezoid-rule known-wrong left-riemann-sum" in result.output
    assert "is caught by second-order" in result.output
    assert "is caught by stays-orthonormal-on-hilbert" in result.output
    assert "is caught by orthonormal-columns" in result.output


@pytest.mark.parametrize("exercise_id", ["gram-schmidt", "trapezoid-rule"])
def test_the_worked_examples_of_the_authoring_guide_are_these_fixtures(exercise_id: str) -> None:
    """docs/authoring.md shows these specs; the slow test above validates them with their solutions."""
    doc = (FIXTURES.parents[2] / "docs" / "authoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
    shown = next(block for block in blocks if block.startswith(f"id: {exercise_id}\n"))
    assert shown == (FIXTURES / "exercises" / f"{exercise_id}.yaml").read_text(encoding="utf-8")
