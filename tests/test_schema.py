"""``grader schema``: a JSON Schema (draft 2020-12) of exercise specs that editors and standard validators use."""

from __future__ import annotations

import copy
import json
import re
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
# the test projects' specs use what the bundled ones do not: matrices and scripts cases, classes, more properties
FIXTURE_SPECS = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("tests/fixtures/*/exercises/*.yaml"))
ALL_SPECS = [path.name for path in BUNDLED] + FIXTURE_SPECS


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
    """A spec as a validator sees it: ``name`` under exercises/, or a path from the project root."""
    path = ROOT / "exercises" / name if "/" not in name else ROOT / name
    data, _ = load_yaml(path.read_text(encoding="utf-8"))
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


@pytest.mark.parametrize("name", FIXTURE_SPECS)
def test_schema_accepts_every_spec_of_the_test_projects(validator: Any, name: str) -> None:
    assert _errors(validator, _spec(name)) == []


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


def _best(validator: Any, instance: Any) -> tuple[tuple[list[Any], str, str] | None, set[str]]:
    """The error ``jsonschema.exceptions.best_match`` picks (its path, its JSON path and its message), and where
    every error is, as JSON paths: an editor lists them all, so none may be elsewhere."""
    errors = list(validator.iter_errors(instance))
    error = jsonschema.exceptions.best_match(errors)
    best = None if error is None else (list(error.absolute_path), error.json_path, error.message)
    return best, {error.json_path for error in errors}


def _json_path(path: list[Any]) -> str:
    """``path`` as JSONPath, the way a validator shows where an error is: ``$.checks[2]``, ``$.cases['non-square']``."""
    return "$" + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" if re.fullmatch(r"[A-Za-z]\w*", part) else f"['{part}']"
        for part in path
    )


def _records(spec: dict) -> Iterator[tuple[str, list[Any]]]:
    """Every record (an object with fixed keys) in a spec, as its shape and its path: the spec, its entries,
    checks (the shape names the property) with their hints and premises, case generators (named by their key)
    with their draws, matrices and script steps, public examples, given functions, known-wrong solutions,
    questions with their options and mistakes, params. Mappings whose
    keys the author names (``cases:``, ``args:``, ``control:``) are not records."""
    yield spec["kind"], []
    for name in spec.get("entries", {}):
        yield "entry", ["entries", name]
    for index, check in enumerate(spec.get("checks", [])):
        yield f"check {check['property']}", ["checks", index]
        for number, _hint in enumerate(check["hints"] if isinstance(check.get("hints"), list) else []):
            yield "hint", ["checks", index, "hints", number]
            yield "premise", ["checks", index, "hints", number, "when"]
    for case_set, generators in spec.get("cases", {}).items():
        for index, generator in enumerate(generators):
            form = next(key for key in ("examples", "random", "matrices", "scripts") if key in generator)
            yield f"generator {form}", ["cases", case_set, index]
            if form in ("random", "matrices"):
                yield form, ["cases", case_set, index, form]
            for arg, draw in generator.get("random", {}).get("args", {}).items():
                if isinstance(draw, dict):
                    yield "draw", ["cases", case_set, index, "random", "args", arg]
            for script, steps in enumerate(generator.get("scripts", [])):
                for step, _item in enumerate(steps):
                    yield "script step", ["cases", case_set, index, "scripts", script, step]
    for key in ("examples", "given_functions"):
        for index, _item in enumerate(spec.get(key, [])):
            yield key, [key, index]
    for index, wrong in enumerate(spec.get("known_wrong", [])):
        yield "known wrong", ["known_wrong", index]
        if wrong.get("raises") is not None:
            yield "raises", ["known_wrong", index, "raises"]
    for index, question in enumerate(spec.get("questions", [])):
        yield f"question {question['type']}", ["questions", index]
        for key in ("options", "mistakes"):
            for number, _item in enumerate(question.get(key, [])):
                yield key, ["questions", index, key, number]
    for name in spec.get("params", {}):
        yield "param", ["params", name]


def _one_record_of_each_shape() -> list[tuple[str, list[Any]]]:
    """The first record of each shape in the bundled specs and the test projects': (spec file, its path)."""
    found: dict[str, tuple[str, list[Any]]] = {}
    for name in ALL_SPECS:
        for shape, record in _records(_spec(name)):
            found.setdefault(shape, (name, record))
    return list(found.values())


RECORDS = _one_record_of_each_shape()
# every check of these, so a check's errors are shown not to depend on its place or its neighbours
EVERY_CHECK_OF = ["stable-softmax.yaml", "scaling-experiment.yaml", "attention-weights.yaml"]


def _at(node: Any, path: list[Any]) -> Any:
    for part in path:
        node = node[part]
    return node


def test_schema_leaves_no_union_over_objects(schema: dict) -> None:
    """A validator guesses which branch of an anyOf/oneOf the author meant; over objects that guess hides a typo."""

    def unions(node: Any, path: str = "#") -> Iterator[tuple[str, list[Any]]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("anyOf", "oneOf"):
                    yield f"{path}/{key}", value
                yield from unions(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, item in enumerate(node):
                yield from unions(item, f"{path}/{index}")

    over_objects = [
        path
        for path, branches in unions(schema)
        for branch in branches
        if "$ref" in branch or "properties" in branch or branch.get("type") == "object"
    ]
    assert over_objects == []


def _misspelt_key_report(validator: Any, spec: dict, record: list[Any]) -> tuple[Any, Any]:
    """What a validator reports for ``spec`` with a misspelt key added to ``record``, and what it should report:
    the best error at that record naming the key, and no error anywhere else."""
    mutated = copy.deepcopy(spec)
    _at(mutated, record)["tolerence"] = 0.1
    where = _json_path(record)
    expected = ((record, where, "Additional properties are not allowed ('tolerence' was unexpected)"), {where})
    return _best(validator, mutated), expected


def test_schema_finds_a_record_of_every_shape() -> None:
    shapes = {shape for name in ALL_SPECS for shape, _record in _records(_spec(name))}
    expected = {f"check {name}" for name in property_names()} | {
        *(f"generator {form}" for form in ("examples", "random", "matrices", "scripts")),
        *("hint", "premise", "random", "draw", "matrices", "script step", "examples", "given_functions"),
        *("options", "mistakes", "question numeric", "question single", "entry", "known wrong"),
    }
    assert expected <= shapes


@pytest.mark.parametrize(("name", "record"), RECORDS, ids=[f"{name}:{_json_path(record)}" for name, record in RECORDS])
def test_schema_best_error_for_a_misspelt_key_is_at_its_record(validator: Any, name: str, record: list[Any]) -> None:
    found, expected = _misspelt_key_report(validator, _spec(name), record)
    assert found == expected


@pytest.mark.parametrize("name", EVERY_CHECK_OF)
def test_schema_best_error_for_a_misspelt_key_of_each_check_is_at_that_check(validator: Any, name: str) -> None:
    spec = _spec(name)
    assert _best(validator, spec) == (None, set())
    assert len(spec["checks"]) > 5
    wrong = []
    for index, _check in enumerate(spec["checks"]):
        found, expected = _misspelt_key_report(validator, spec, ["checks", index])
        if found != expected:
            wrong.append((index, found))
    assert wrong == []


# each tag, the lists of objects it tells apart (the empty path: the spec itself), and the tags it allows
TAGS = {
    "kind": (None, ["implementation", "witness", "quiz", "assignment"]),
    "property": ("checks", property_names()),
    "type": ("questions", ["single", "multiple", "numeric"]),
}


def _tagged(spec: dict) -> Iterator[tuple[list[Any], str]]:
    """Every tagged object of a spec, as its path and its tag."""
    for tag, (key, _allowed) in TAGS.items():
        if key is None:
            yield [], tag
        for index, _item in enumerate(spec.get(key, []) if key else []):
            yield [key, index], tag


@pytest.mark.parametrize("name", ALL_SPECS)
def test_schema_best_error_for_an_unknown_tag_is_at_the_tag_with_the_allowed_ones(validator: Any, name: str) -> None:
    spec = _spec(name)
    wrong = []
    for record, tag in _tagged(spec):
        mutated = copy.deepcopy(spec)
        _at(mutated, record)[tag] = "bogusword"
        found, everywhere = _best(validator, mutated)
        where = _json_path([*record, tag])
        if (
            found is None
            or found[:2] != ([*record, tag], where)
            or not found[2].startswith("'bogusword' is not one of")
            or not all(repr(value) in found[2] for value in TAGS[tag][1])
            or everywhere != {where}
        ):
            wrong.append((record, tag, found, everywhere))
    assert wrong == []


def _known_wrong_spec() -> dict:
    spec = copy.deepcopy(_spec("stable-softmax.yaml"))
    spec["known_wrong"][0]["raises"] = {"type": "ValueError", "message": "axis"}
    return spec


@pytest.mark.parametrize(
    ("mutate", "path", "message"),
    [
        (
            lambda spec: spec["known_wrong"][0]["raises"].update(mesage="x"),
            ["known_wrong", 0, "raises"],
            "Additional properties are not allowed ('mesage' was unexpected)",
        ),
        (
            lambda spec: spec["known_wrong"][0].update(raises="ValueError"),
            ["known_wrong", 0, "raises"],
            "'ValueError' is not of type 'object', 'null'",
        ),
        (
            lambda spec: spec["checks"][0].update(hints={"nan": "look at exp", "nann": "typo"}),
            ["checks", 0, "hints"],
            "'nann' is not one of ['nan', 'inf', 'dtype', 'shape', 'exception', 'timeout', 'wrong-value']",
        ),
        (
            lambda spec: spec["cases"]["basic"][1]["random"]["args"].update(z=3),
            ["cases", "basic", 1, "random", "args", "z"],
            "3 is not of type 'object', 'array'",
        ),
    ],
    ids=["raises-misspelt-key", "raises-not-a-record", "hints-unknown-mode", "arg-draw-not-a-draw"],
)
def test_schema_reports_a_value_of_a_union_told_apart_by_type_at_that_value(
    validator: Any, mutate: Any, path: list[Any], message: str
) -> None:
    spec = _known_wrong_spec()
    assert _errors(validator, spec) == []
    mutate(spec)
    assert _errors(validator, spec) == [(path, message)]
    assert _best(validator, spec) == ((path, _json_path(path), message), {_json_path(path)})


def test_schema_reports_a_misspelt_key_of_a_quiz_param_and_mistake(validator: Any) -> None:
    quiz = {
        "id": "q",
        "kind": "quiz",
        "title": "T",
        "params": {"a": {"uniform": [1, 5], "round": 2}},
        "questions": [
            {
                "id": "n",
                "type": "numeric",
                "prompt": "What is {a} times two?",
                "answer": "2 * a",
                "tolerance": 0.01,
                "reason_correct": "right",
                "reason_wrong": "double it",
                "mistakes": [{"value": "a", "reason": "not doubled"}],
            }
        ],
    }
    assert _errors(validator, quiz) == []
    for _shape, path in _records(quiz):
        mutated = copy.deepcopy(quiz)
        _at(mutated, path)["tolerence"] = 0.1
        assert _errors(validator, mutated) == [
            (path, "Additional properties are not allowed ('tolerence' was unexpected)")
        ], path
