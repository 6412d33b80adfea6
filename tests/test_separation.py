"""Separating calls: chosen so that every pair of solutions any call tells apart is told apart by a few, varied,
calls; kept on disk as checked plain data; and reported by validate where no call tells a pair apart."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.engine import disk_cache
from grader.engine.separation import Separation, find_separation, separation_data, separation_from_data, shape_parts
from grader.sandbox.outcomes import CallOutcome
from grader.spec.loader import load_spec_file

SPEC = Path(__file__).resolve().parents[1] / "exercises" / "stable-softmax.yaml"


def _value(*numbers: float) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.array(numbers)], kind="single", types=["ndarray"])


def _differ(key: int, a: CallOutcome, b: CallOutcome) -> bool:
    return a.status != b.status or not np.allclose(a.values[0], b.values[0], rtol=0, atol=1e-9)


def test_separation_covers_each_pair_several_times_and_reports_the_pair_no_call_tells_apart() -> None:
    # Call 0 tells nothing apart; 1 and 2 tell the reference from the others; 3 and 4 tell every separable pair.
    answers = {
        "reference": {0: _value(1), 1: _value(1), 2: _value(1), 3: _value(1), 4: _value(1)},
        "a": {0: _value(1), 1: _value(2), 2: _value(2), 3: _value(2), 4: _value(2)},
        "b": {0: _value(1), 1: _value(2), 2: _value(2), 3: _value(3), 4: _value(3)},
        "same-as-a": {0: _value(1), 1: _value(2), 2: _value(2), 3: _value(2), 4: _value(2)},
    }
    tolerance = dict.fromkeys(range(5), (0.0, 1e-9))
    found = find_separation({"f": [0, 1, 2, 3, 4]}, answers, tolerance, _differ, cover=2)
    assert found.keys == {"f": (3, 4)}
    assert found.unseparated == (("a", "same-as-a"),)
    assert set(found.tolerance) == {3, 4}
    assert find_separation({"f": [0, 1, 2]}, answers, tolerance, _differ, cover=2).keys == {"f": (1, 2)}


def test_separation_prefers_a_call_unlike_those_chosen_and_stops_at_its_limit() -> None:
    answers = {"reference": {k: _value(0) for k in range(4)}, "a": {k: _value(1) for k in range(4)}}
    shapes = {0: (("n", 2),), 1: (("n", 2),), 2: (("n", 3),), 3: (("n", 2),)}
    found = find_separation(
        {"f": [0, 1, 2, 3]}, answers, dict.fromkeys(range(4), (0.0, 0.0)), _differ, shapes.get, cover=2
    )
    assert found.keys == {"f": (0, 2)}  # the second call chosen has another n: not the next in order
    few = find_separation({"f": [0, 1, 2, 3]}, answers, dict.fromkeys(range(4), (0.0, 0.0)), _differ, most=1)
    assert few.keys == {"f": (0,)}


def test_separation_learns_nothing_from_a_call_a_solution_did_not_answer_in_full() -> None:
    answers = {"reference": {0: _value(0), 1: _value(0)}, "a": {0: CallOutcome(status="timeout"), 1: _value(0)}}
    found = find_separation({"f": [0, 1]}, answers, {0: (0.0, 0.0), 1: (0.0, 0.0)}, _differ)
    assert found.keys == {"f": ()} and found.unseparated == (("a", "reference"),)


def test_shape_parts_name_array_shapes_and_numbers() -> None:
    parts = shape_parts({"z": np.zeros((2, 3)), "h": 0.5, "f": object()})
    assert parts == (("z", (2, 3), "<f8"), ("h", 0.5))


def test_a_separation_is_kept_on_disk_as_checked_data(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    ids = tuple(check.id for check in exercise.checks)
    chosen = Separation({"softmax": (3, 7)}, {3: (1e-9, 0.0), 7: (1e-6, 1e-12)}, (("a", "b"),))
    assert separation_from_data(json.loads(json.dumps(separation_data(chosen)))) == chosen
    asked: list[int] = []

    def choose() -> Separation:
        asked.append(1)
        return chosen

    assert disk_cache.stored_separation(exercise, ids, b"solutions", choose) == chosen
    assert disk_cache.stored_separation(load_spec_file(copy), ids, b"solutions", choose) == chosen
    assert len(asked) == 1  # the second run reads it back
    assert disk_cache.stored_separation(exercise, ids, b"solutions, one edited", choose) == chosen
    assert len(asked) == 2


@pytest.mark.parametrize(
    "forged",
    [
        {"keys": {"f": [1]}, "tolerance": [], "unseparated": []},
        {"keys": {"f": [-1]}, "tolerance": [[-1, 0.0, 0.0]], "unseparated": []},
        {"keys": {"f": [1]}, "tolerance": [[1, "0", 0.0]], "unseparated": []},
        {"keys": {"f": [1]}, "tolerance": [[1, 0.0, 0.0]], "unseparated": [["a"]]},
        {"keys": {"f": [1]}, "tolerance": [[1, 0.0, 0.0]]},
        ["keys"],
    ],
    ids=["tolerance-missing", "negative-call", "text-tolerance", "half-pair", "field-missing", "not-a-mapping"],
)
def test_a_forged_separation_is_refused(forged: object) -> None:
    with pytest.raises(ValueError):
        separation_from_data(forged)


@pytest.mark.slow
def test_validate_notes_two_known_mistakes_no_call_tells_apart(tmp_path: Path, session) -> None:
    from tests.test_validate import copy_catalog, validate_copy, wrong

    def edit(spec: dict) -> None:  # a second entry for the very same mistake, under another id
        spec["known_wrong"].append({**copy.deepcopy(wrong(spec, "global-max")), "id": "global-max-again"})

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    notes = [line.render() for line in report.lines if line.subject == "diagnosis"]
    assert notes == [
        "note    stable-softmax diagnosis: known-wrong global-max and known-wrong global-max-again answer every "
        "call of the checks alike, so neither is named to a learner whose answers match them; add a case on "
        "which they differ"
    ]


@pytest.mark.slow
def test_validate_reports_the_separating_calls_of_every_exercise_with_known_mistakes(session) -> None:
    from grader.authoring.validate import validate_catalog

    ids = ["attention-weights", "argmax-zero-gradient"]
    report = validate_catalog(session.catalog, session=session, exercise_ids=ids)
    lines = [line for line in report.lines if line.subject == "diagnosis"]
    assert [(line.exercise, line.verdict) for line in lines] == [(i, "ok") for i in ids]
    assert all("tell its" in line.message and "apart" in line.message for line in lines)
