"""``grader schema``: a JSON Schema (draft 2020-12) of exercise specs that editors and standard validators use."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from grader.checks.registry import CHECK_TYPES, property_names
from grader.cli import main
from grader.safeyaml import load_yaml

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted((ROOT / "exercises").glob("*.yaml"))


@pytest.fixture(scope="module")
def schema() -> dict:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def validator(schema: dict) -> Any:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _spec(name: str) -> dict:
    data, _ = load_yaml((ROOT / "exercises" / name).read_text(encoding="utf-8"))
    return data


def _errors(validator: Any, instance: Any) -> list[tuple[list[Any], str]]:
    return [(list(error.absolute_path), error.message) for error in validator.iter_errors(instance)]


def _declared_properties(node: Any, path: str = "#") -> Iterator[tuple[str, Any]]:
    """Every property a schema declares, with its path; an ``if`` only tests a tag, it declares nothing."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "if":
                continue
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    yield f"{path}/properties/{name}", prop
                    yield from _declared_properties(prop, f"{path}/properties/{name}")
            else:
                yield from _declared_properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _declared_properties(item, f"{path}/{index}")


def test_schema_names_its_dialect_and_an_id(schema: dict) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:grader:")
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator


def test_schema_has_every_property_name_and_spec_key(schema: dict) -> None:
    text = json.dumps(schema)
    missing = [name for name in property_names() if json.dumps(name) not in text]
    assert missing == []
    for key in ("reference_solution", "known_wrong", "must_fail", "misconception", "visibility", "questions"):
        assert f'"{key}"' in text, key


def test_schema_uses_no_keyword_validators_ignore(schema: dict) -> None:
    assert '"discriminator"' not in json.dumps(schema)


def test_schema_describes_every_property(schema: dict) -> None:
    properties = list(_declared_properties(schema))
    assert len(properties) > 500
    undescribed = [path for path, prop in properties if not str(prop.get("description", "")).strip()]
    assert undescribed == []


def test_schema_describes_a_check_s_property_tag_by_its_class_docstring(schema: dict) -> None:
    for check in CHECK_TYPES:
        definition = schema["$defs"][check.__name__]
        first_line = (check.__doc__ or "").strip().splitlines()[0]
        assert definition["properties"]["property"]["description"].startswith(first_line), check.__name__


@pytest.mark.parametrize("path", BUNDLED, ids=[path.name for path in BUNDLED])
def test_schema_accepts_every_bundled_spec(validator: Any, path: Path) -> None:
    assert _errors(validator, _spec(path.name)) == []


def _one_check_of_each_property() -> list[tuple[str, int]]:
    """The first check of each property in the bundled specs: (spec file, index of the check)."""
    found: dict[str, tuple[str, int]] = {}
    for path in BUNDLED:
        for index, check in enumerate(_spec(path.name).get("checks", [])):
            found.setdefault(check["property"], (path.name, index))
    return list(found.values())


CHECKS = _one_check_of_each_property()


@pytest.mark.parametrize(("name", "index"), CHECKS, ids=[f"{name}-{index}" for name, index in CHECKS])
def test_schema_reports_a_misspelt_key_of_a_check_at_that_check(validator: Any, name: str, index: int) -> None:
    spec = copy.deepcopy(_spec(name))
    spec["checks"][index]["pointz"] = 2
    assert _errors(validator, spec) == [
        (["checks", index], "Additional properties are not allowed ('pointz' was unexpected)")
    ]


def test_schema_reports_an_unknown_kind_with_the_allowed_kinds(validator: Any) -> None:
    spec = _spec("stable-softmax.yaml") | {"kind": "implementaton"}
    [(path, message)] = _errors(validator, spec)
    assert path == ["kind"]
    for kind in ("implementation", "witness", "quiz", "assignment"):
        assert repr(kind) in message


def test_schema_reports_an_unknown_property_at_the_check_s_property_key(validator: Any) -> None:
    spec = copy.deepcopy(_spec("stable-softmax.yaml"))
    spec["checks"][-1]["property"] = "sums-to-won"
    [(path, message)] = _errors(validator, spec)
    assert path == ["checks", len(spec["checks"]) - 1, "property"]
    assert all(repr(name) in message for name in property_names())


def test_schema_reports_a_misspelt_key_of_a_question_and_of_a_case_generator(validator: Any) -> None:
    quiz = copy.deepcopy(_spec("why-softmax-quiz.yaml"))
    quiz["questions"][0]["optoins"] = quiz["questions"][0].pop("options")
    assert (["questions", 0], "Additional properties are not allowed ('optoins' was unexpected)") in _errors(
        validator, quiz
    )
    spec = copy.deepcopy(_spec("stable-softmax.yaml"))
    case_set = next(iter(spec["cases"]))
    generator = spec["cases"][case_set][0]
    key = next(iter(generator))
    generator[key + "s"] = generator.pop(key)
    errors = _errors(validator, spec)
    assert errors
    assert all(path == ["cases", case_set, 0] for path, _message in errors)
    assert f"Additional properties are not allowed ('{key}s' was unexpected)" in [message for _path, message in errors]


def test_schema_refuses_an_unknown_key_of_a_quiz(validator: Any) -> None:
    assert _errors(validator, {"id": "x", "kind": "quiz", "title": "T", "questions": [], "typo": 1})
