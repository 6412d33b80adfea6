"""docs/authoring.md stays true: its specs load and validate, and every property of the library has a row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from grader.checks.registry import CheckSpec, property_names
from grader.cli import main
from grader.record.validation import adapter

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs/authoring.md").read_text(encoding="utf-8")
ROWS = {match.group(1): match.group(2) for match in re.finditer(r"(?m)^\| `([a-z-]+)` \|[^|]*\| `(\{.*\})` \|$", DOC)}

REFERENCE = (
    "import numpy as np\n\n\ndef stable_sigmoid(x):\n    x = np.asarray(x, dtype=float)\n"
    "    return np.exp(-np.logaddexp(0.0, -x))\n"
)
WRONG = "import numpy as np\n\n\ndef stable_sigmoid(x):\n    e = np.exp(x)\n    return e / (1 + e)\n"


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC, flags=re.DOTALL)


def test_every_property_of_the_registry_has_a_row_with_an_example() -> None:
    assert sorted(ROWS) == sorted(property_names())


@pytest.mark.parametrize("name", sorted(property_names()))
def test_each_property_example_is_a_valid_check(name: str) -> None:
    adapter(CheckSpec).validate_python(yaml.safe_load(ROWS[name]))


@pytest.mark.slow
def test_the_worked_examples_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _yaml_blocks()  # the first is the implementation spec; other worked examples are tested apart
    spec, quiz = blocks[0], next(block for block in blocks if "kind: quiz" in block)
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/stable-sigmoid.yaml").write_text(spec)
    (tmp_path / "exercises/sigmoid-quiz.yaml").write_text(quiz)
    (tmp_path / "solutions/stable-sigmoid").mkdir(parents=True)
    (tmp_path / "solutions/stable-sigmoid/reference.py").write_text(REFERENCE)
    (tmp_path / "solutions/stable-sigmoid/wrong_exp_ratio.py").write_text(WRONG)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--exercises", "exercises", "validate"])
    assert result.exit_code == 0, result.output
    assert "ok      stable-sigmoid examples: the reference gives the result of 1 example" in result.output


def test_the_variants_worked_example_validates_and_shows_a_learners_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiz = next(block for block in _yaml_blocks() if "params:" in block and "kind: quiz" in block)
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/temperature-variant-quiz.yaml").write_text(quiz)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRADER_VARIANT_SECRET", "a course secret of enough bytes")
    validated = CliRunner().invoke(main, ["--exercises", "exercises", "validate"])
    assert validated.exit_code == 0, validated.output
    assert "on 8 variants the answer key passes" in validated.output
    shown = CliRunner().invoke(
        main, ["--exercises", "exercises", "show", "temperature-variant-quiz", "--learner", "ada"]
    )
    assert shown.exit_code == 0, shown.output
    assert "{t}" not in shown.output and "{n}" not in shown.output
    assert re.search(r"for ada: t = [0-9.]+, n = [2-6]\n", shown.output)


def test_the_case_variants_worked_example_loads_and_computes_a_learners_cases(tmp_path: Path) -> None:
    from grader.engine.case_variants import exercise_for_variant
    from grader.engine.variants import draw_variant
    from grader.spec.loader import load_spec_file

    spec = next(block for block in _yaml_blocks() if "id: shift-scores" in block)
    (tmp_path / "shift-scores.yaml").write_text(spec)
    exercise = load_spec_file(tmp_path / "shift-scores.yaml")
    variant = draw_variant(exercise.id, exercise.params, "ada", b"a course secret of enough bytes")  # type: ignore[union-attr]
    a, n = variant.values["a"], variant.values["n"]
    concrete = exercise_for_variant(exercise, variant)  # type: ignore[arg-type]
    assert concrete.cases["yours"][0].examples[0] == {"z": [a, a + 1, a * n]}
    assert concrete.checks[1].where == {"c": [10 * a, 1.0]}  # type: ignore[union-attr]


def test_every_key_of_a_hint_premise_has_a_row_with_a_valid_example() -> None:
    from grader.checks.base import Premise

    rows = dict(re.findall(r"(?m)^  \| `([a-z_]+)` \|[^|]*\| `(\{.*\})` \|$", DOC))
    assert sorted(rows) == sorted(Premise.model_fields)
    for key, example in rows.items():
        assert key in yaml.safe_load(example)
        Premise.model_validate(yaml.safe_load(example))
