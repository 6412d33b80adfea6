"""``grader schema``: a JSON Schema of exercise specs that editors can use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.checks.registry import property_names
from grader.cli import main
from grader.safeyaml import load_yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema() -> dict:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_schema_is_json_with_every_property_name(schema: dict) -> None:
    text = json.dumps(schema)
    missing = [name for name in property_names() if json.dumps(name) not in text]
    assert missing == []
    for key in (
        "reference_solution",
        "known_wrong",
        "must_fail",
        "misconception",
        "visibility",
        "questions",
        "options",
        "correct",
        "reason",
        "cases",
        "checks",
        "entries",
        "signature",
    ):
        assert f'"{key}"' in text, key


def test_schema_is_a_valid_json_schema_that_accepts_real_specs(schema: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    for name in ("why-softmax-quiz.yaml", "why-softmax.yaml"):
        spec, _ = load_yaml((ROOT / "exercises" / name).read_text(encoding="utf-8"))
        assert list(validator.iter_errors(spec)) == [], name
    assert list(validator.iter_errors({"id": "x", "kind": "quiz", "title": "T", "questions": [], "typo": 1}))
