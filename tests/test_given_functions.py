"""Given functions written in YAML (``given_functions:``): checked when the spec loads, compiled for the
learner process, graded end to end, and shown in reasons with the parameters a case fixes."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.checks.display import format_value
from grader.checks.given import NUMPY_PATHS, GivenFunction, compiled_source
from grader.checks.operations import FUNCTIONS
from grader.cli import main
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.instructor_runs import given_source
from grader.engine.memory import GradingMemo
from grader.errors import SpecError
from grader.sandbox.calls import TrustedFunction
from grader.spec.loader import load_catalog
from tests.fakes import InProcessFactory

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "given"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "given")
    return tmp_path / "given"


def _grade(root: Path, source: str) -> dict[str, Any]:
    exercise = load_catalog(root / "exercises").exercise("integrate")
    result = grade_implementation(
        exercise,  # type: ignore[arg-type]
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        root=root,
        memo=GradingMemo(),
    )
    return {check.id: check for check in result.checks}


def _edit(root: Path, old: str, new: str) -> None:
    spec = root / "exercises" / "integrate.yaml"
    text = spec.read_text()
    assert old in text
    spec.write_text(text.replace(old, new))


def test_an_exercise_with_yaml_given_functions_needs_no_functions_file(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    exercise = load_catalog(root / "exercises").exercise("integrate")
    assert getattr(exercise, "functions", None) is None
    source = given_source(exercise, root)  # type: ignore[arg-type]
    namespace: dict[str, Any] = {}
    exec(compile(source, "<given>", "exec"), namespace)  # noqa: S102 - the grader's own compiled source
    assert namespace["line"](np.array([0.0, 1.0]), m=-2.0, c=0.5).tolist() == [0.5, -1.5]
    assert namespace["sine"](np.pi / 2) == pytest.approx(1.0)


def test_the_reference_passes_and_a_known_wrong_fails_with_yaml_given_functions(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    good = _grade(root, (root / "solutions/integrate/reference.py").read_text())
    assert {name: check.status for name, check in good.items()} == dict.fromkeys(good, "passed")
    wrong = _grade(root, (root / "solutions/integrate/wrong_left_sum.py").read_text())
    assert wrong["matches-reference"].status == "failed"


def test_a_failing_case_shows_the_given_function_with_its_real_parameters(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    # Wrong only on the line: the reason's input is then the call that hands over line with m and c fixed.
    source = (root / "solutions/integrate/reference.py").read_text() + (
        "\n\n_right = trapezoid\n\n\ndef trapezoid(f, a, b, n):\n"
        "    return _right(f, a, b, n) + (1.0 if getattr(f, 'keywords', None) else 0.0)\n"
    )
    check = _grade(root, source)["matches-reference"]
    assert check.status == "failed"
    assert check.input == "trapezoid(f=line(m=-2, c=0.5), a=0, b=3, n=4)"


def test_a_bound_function_is_written_with_each_name_it_binds() -> None:
    bound = TrustedFunction("line", (("m", np.asarray(-2.0)), ("c", np.asarray(0.5))))
    assert format_value(bound) == "line(m=-2, c=0.5)"
    assert format_value(TrustedFunction("sine")) == "sine"


@pytest.mark.parametrize(
    ("function", "problem"),
    [
        ({"name": "line", "params": ["x", "m"], "expression": "m * x + c"}, "reads 'c'"),
        ({"name": "line", "params": ["x"], "expression": "__import__('os')"}, "not allowed"),
        ({"name": "line", "params": ["x"], "expression": "x.real"}, "a dot is allowed only"),
        ({"name": "line", "params": ["x"], "expression": "reference.f(x)"}, "numpy functions only"),
        ({"name": "line", "params": ["x"], "expression": "softmax(x)"}, "not a numpy function"),
        ({"name": "exp", "params": ["x"], "expression": "x"}, "is a function of the relation language"),
        ({"name": "line", "params": ["x", "sum"], "expression": "x"}, "the parameter 'sum'"),
        ({"name": "line", "params": ["x", "x"], "expression": "x"}, "named once"),
        ({"name": "line", "params": ["lambda"], "expression": "1"}, "not a name"),
    ],
    ids=[
        "unknown-name",
        "dunder-call",
        "attribute",
        "reference-call",
        "entry-call",
        "numpy-name",
        "numpy-param",
        "twice",
        "keyword",
    ],
)
def test_a_given_function_outside_the_language_is_refused(function: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        GivenFunction.model_validate(function)


def test_every_numpy_function_of_the_language_is_found_where_the_compiled_source_looks() -> None:
    for name in FUNCTIONS:
        found: Any = np
        for part in NUMPY_PATHS.get(name, name).split("."):
            found = getattr(found, part)
        assert callable(found), name


def test_compiled_source_spells_numpy_and_constants_privately_and_keeps_the_language() -> None:
    functions = [
        GivenFunction(name="bump", params=["x", "w"], expression="exp(-x**2 / w) * pi + norm(x) * 0"),
        GivenFunction(name="clip", params=["z"], expression="where(z > 0, z, zeros_like(z)).T[..., :2]"),
    ]
    source = compiled_source(functions)
    tree = ast.parse(source)
    assert [node.name for node in tree.body if isinstance(node, ast.FunctionDef)] == ["bump", "clip"]
    namespace: dict[str, Any] = {}
    exec(compile(source, "<given>", "exec"), namespace)  # noqa: S102 - the grader's own compiled source
    assert namespace["bump"](np.array([0.0]), 1.0).tolist() == [pytest.approx(np.pi)]
    assert namespace["clip"](np.array([-1.0, 2.0, 3.0])).tolist() == [0.0, 2.0]
    assert compiled_source([]) == ""


def test_a_case_naming_an_unlisted_function_is_refused_at_load(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit(root, "{f: sine, a: 0.0, b: 1.0, n: 8}", "{f: sin, a: 0.0, b: 1.0, n: 8}")
    with pytest.raises(SpecError, match="names the function 'sin', which given_functions does not list; did you"):
        load_catalog(root / "exercises")


def test_a_case_fixing_a_parameter_the_function_lacks_is_refused_at_load(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit(root, "{function: line, m: -2.0, c: 0.5}", "{function: line, A: -2.0, c: 0.5}")
    with pytest.raises(SpecError, match=r"fixes 'A', which is not a parameter line leaves to a case \(m, c\)"):
        load_catalog(root / "exercises")


@pytest.mark.slow
def test_validate_passes_the_reference_and_catches_the_known_wrong_in_the_sandbox(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    result = CliRunner().invoke(main, ["--exercises", str(root / "exercises"), "validate"])
    assert result.exit_code == 0, result.output
    assert "PROBLEM" not in result.output


def test_the_worked_example_of_the_authoring_guide_is_this_fixture() -> None:
    """docs/authoring.md shows the fixture's spec as written, so the tests above keep the guide's example true."""
    doc = (Path(__file__).resolve().parents[1] / "docs/authoring.md").read_text(encoding="utf-8")
    spec = (FIXTURES / "exercises/integrate.yaml").read_text(encoding="utf-8")
    assert f"```yaml\n{spec}```" in doc


def test_a_name_defined_both_in_the_functions_file_and_in_yaml_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "solutions/integrate/given.py").write_text("import numpy as np\n\n\ndef sine(x):\n    return np.sin(x)\n")
    _edit(root, "given_functions:\n", "functions: solutions/integrate/given.py\ngiven_functions:\n")
    with pytest.raises(SpecError, match="'sine' is also defined by solutions/integrate/given.py"):
        load_catalog(root / "exercises")
