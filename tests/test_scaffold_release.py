"""A ``scaffold:`` block, the code a learner is given: in the stub, the page and ``grader show``, let through by
the leak scan, while any other line of a solution copied into the handout is still caught.

The fixture (tests/fixtures/given) gives learners grid(a, b, n), which its reference solution also defines.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.authoring.handout import describe_exercise
from grader.authoring.leaks import find_leaks
from grader.authoring.release import handout_files, release_handout
from grader.cli import main
from grader.errors import SpecError
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import ImplementationExercise

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "given"
GIVEN_LINE = "return np.linspace(a, b, n + 1)"
OTHER_LINE = "values = np.asarray(f(grid(a, b, n)), dtype=float)"


def _project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "given")
    return tmp_path / "given"


def _edit(root: Path, old: str, new: str) -> Catalog:
    spec = root / "exercises" / "integrate.yaml"
    text = spec.read_text()
    assert old in text
    spec.write_text(text.replace(old, new))
    return load_catalog(root / "exercises")


def test_the_scaffold_is_in_the_stub_the_page_and_grader_show(tmp_path: Path) -> None:
    catalog = load_catalog(_project(tmp_path) / "exercises")
    files = handout_files(catalog)
    stub = files["integrate.py"]
    tree = ast.parse(stub)
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert defined == ["grid", "trapezoid"]
    assert stub.count("import numpy as np") == 1  # the scaffold's own import, not a second one
    assert GIVEN_LINE in stub and "raise NotImplementedError('write trapezoid')" in stub
    assert "```python\nimport numpy as np\n\n\ndef grid(a, b, n):" in files["integrate.md"]
    assert "- `line(x, m, c)`: the straight line m x + c" in files["integrate.md"]
    shown = describe_exercise(catalog.exercise("integrate"))
    assert f"        {GIVEN_LINE}" in shown
    assert "    line(x, m, c): the straight line m x + c" in shown and "    sine(x): sin(x)" in shown


def test_the_leak_scan_lets_the_scaffold_through_but_not_another_line_of_the_reference(tmp_path: Path) -> None:
    root = _project(tmp_path)
    catalog = load_catalog(root / "exercises")
    assert GIVEN_LINE in (root / "solutions/integrate/reference.py").read_text()
    assert find_leaks(catalog, handout_files(catalog)) == []
    copied = _edit(root, "is yours to use.", f"is yours to use, as in {OTHER_LINE}")
    leaks = find_leaks(copied, handout_files(copied))
    assert leaks and all(OTHER_LINE in leak for leak in leaks)
    assert any("code of the reference solution of integrate" in leak for leak in leaks)


def test_without_the_scaffold_its_lines_are_the_reference_code_it_is(tmp_path: Path) -> None:
    """The exemption is the scaffold's: the same prompt quoting the same line is a leak when no scaffold gives it."""
    root = _project(tmp_path)
    text = (root / "exercises/integrate.yaml").read_text()
    start, end = text.index("scaffold: |"), text.index("entries:")
    catalog = _edit(root, text[start:end], f"# (no scaffold) {GIVEN_LINE}\n")
    catalog = _edit(root, "is yours to use.", f"is {GIVEN_LINE}.")
    leaks = find_leaks(catalog, handout_files(catalog))
    assert any(GIVEN_LINE in leak for leak in leaks)


def test_an_entry_the_scaffold_defines_is_not_stubbed_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    catalog = _edit(
        root,
        "      return np.linspace(a, b, n + 1)\n",
        "      return np.linspace(a, b, n + 1)\n\n\n  def trapezoid(f, a, b, n):\n"
        "      points = grid(a, b, n)\n      raise NotImplementedError('finish trapezoid')\n",
    )
    stub = handout_files(catalog)["integrate.py"]
    defined = [node.name for node in ast.parse(stub).body if isinstance(node, ast.FunctionDef)]
    assert defined == ["grid", "trapezoid"]
    assert "finish trapezoid" in stub and "write trapezoid" not in stub


def test_a_scaffold_that_does_not_parse_is_refused_at_load_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="the scaffold is not Python that parses"):
        _edit(_project(tmp_path), "  def grid(a, b, n):", "  def grid(a, b, n)")


def test_an_exercise_without_a_scaffold_keeps_its_stub(tmp_path: Path) -> None:
    root = _project(tmp_path)
    text = (root / "exercises/integrate.yaml").read_text()
    start, end = text.index("scaffold: |"), text.index("entries:")
    catalog = _edit(root, text[start:end], "")
    exercise = catalog.exercise("integrate")
    assert isinstance(exercise, ImplementationExercise) and exercise.scaffold == ""
    stub = handout_files(catalog)["integrate.py"]
    assert stub.count("import numpy as np") == 1
    assert [node.name for node in ast.parse(stub).body if isinstance(node, ast.FunctionDef)] == ["trapezoid"]


@pytest.mark.slow
def test_the_released_handout_grades_with_its_yaml_given_functions(tmp_path: Path) -> None:
    root = _project(tmp_path)
    out = tmp_path / "handout"
    release_handout(load_catalog(root / "exercises"), out=out)
    checks = str(out / "public-checks")
    good = CliRunner().invoke(
        main, ["--exercises", checks, "grade", str(root / "solutions/integrate/reference.py"), "--public"]
    )
    assert good.exit_code == 0, good.output
    stub = CliRunner().invoke(main, ["--exercises", checks, "grade", str(out / "integrate.py"), "--public"])
    assert stub.exit_code == 1 and "NotImplementedError" in stub.output
