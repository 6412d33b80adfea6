"""Reasons name an entry's output with the spec's own noun, not softmax's "weights"."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from grader.spec.loader import load_spec_file

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
