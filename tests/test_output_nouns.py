"""Reasons name an entry's output with the spec's own noun, not softmax's "weights"."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import yaml

from grader.spec.loader import load_spec_file

ROOT = Path(__file__).resolve().parents[1]

SPEC = {
    "id": "probabilities-demo",
    "kind": "implementation",
    "title": "demo",
    "prompt": "demo",
    "entries": {"f": {"signature": "f(z, axis=-1)", "args": {"z": "float_array", "axis": "int"}}},
    "cases": {"basic": [{"examples": [{"z": [1.0, 2.0]}]}]},
    "checks": [
        {"id": "sums", "property": "sums-to-one", "cases": ["basic"]},
        {"id": "signs", "property": "non-negative", "cases": ["basic"]},
        {"id": "named", "property": "non-negative", "cases": ["basic"], "noun": "losses"},
    ],
}


def _load(tmp_path: Path, output: str | None) -> list[str]:
    spec = copy.deepcopy(SPEC)
    if output is not None:
        spec["entries"]["f"]["output"] = output
    path = tmp_path / "probabilities-demo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    exercise = load_spec_file(path)
    return [check.describe("f") for check in exercise.checks]  # type: ignore[union-attr]


def test_the_entry_output_names_the_values_in_every_description(tmp_path: Path) -> None:
    sums, signs, named = _load(tmp_path, "probabilities")
    assert sums == "each slice of the probabilities f returns sums to 1 along the normalised axis"
    assert signs == "no entry of the probabilities f returns is negative"
    assert named == "no entry of the losses f returns is negative"  # a check's own noun wins


def test_without_an_output_the_values_are_the_result(tmp_path: Path) -> None:
    sums, signs, _ = _load(tmp_path, None)
    assert "the result f returns" in sums and "weights" not in sums
    assert signs == "no entry of the result f returns is negative"


# Modules whose every sentence is generic: no exercise's entry, argument or result names, and no advice
# written for one exercise. The property families built on one experiment's parameters (statistics.py's
# variance checks, experiment.py, calculus.py's step h) name those parameters by design, in their own classes.
GENERIC = [
    *sorted((ROOT / "grader" / "engine").glob("*.py")),
    *(ROOT / "grader" / "checks" / name for name in ("base.py", "properties.py", "general.py", "identity.py")),
    *(ROOT / "grader" / "checks" / name for name in ("float_errors.py", "form.py", "numbers.py", "display.py")),
]
# Learner-facing strings of statistics.py outside the variance experiment's own checks.
GENERIC_CLASSES = {ROOT / "grader" / "checks" / "statistics.py": {"FloatTuple"}}
GENERIC_WORDS = {"z", "x", "f", "axis", "h"}  # single letters and the axis are every exercise's words


def _exercise_nouns() -> set[str]:
    nouns = set()
    for path in (ROOT / "exercises").glob("*.yaml"):
        spec = yaml.safe_load(path.read_text())
        for name, entry in (spec.get("entries") or {}).items():
            nouns.update([name, *(entry.get("args") or {})])
        for check in spec.get("checks") or []:
            nouns.update(check.get("names") or [])
    return nouns - GENERIC_WORDS


def _sentences(path: Path, classes: set[str] | None = None) -> list[tuple[int, str]]:
    """String constants with a space in them (sentences), outside docstrings and field descriptions."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "description":
            skip.update(id(part) for part in ast.walk(node.value))
    roots = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in classes] if classes else [tree]
    return [
        (node.lineno, node.value)
        for top in roots
        for node in ast.walk(top)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value and id(node) not in skip
    ]


def test_no_learner_facing_sentence_of_the_engine_carries_an_exercise_noun() -> None:
    nouns = _exercise_nouns()
    assert {"softmax", "logits", "d_k", "var_unscaled", "T"} <= nouns
    found = []
    places = [(path, None) for path in GENERIC] + list(GENERIC_CLASSES.items())
    for path, classes in places:
        for line, text in _sentences(path, classes):
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
            found += [f"{path.relative_to(ROOT)}:{line}: {word!r} in {text!r}" for word in sorted(words & nouns)]
            found += [f"{path.relative_to(ROOT)}:{line}: {text!r}" for phrase in SPECIFIC if phrase in text]
    assert found == []


# Advice once written into the engine for one exercise's code.
SPECIFIC = ("z = z - c", "z[j] += h", "0.25 cannot be stored", "fractions such as 0.25")
