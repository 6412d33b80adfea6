"""A pytest suite that makes every learner call the grader makes, for the pytest-per-submission baseline.

``benchmarks/run.py`` times one pytest process per learner against ``grader batch``. Its first
suite (``BASELINE_TEST`` there) is a few dozen hand-written tests of nine exercises: a fraction of
what the grader asks. The suite written here asks what the grader asks of each learner, at the
least cost to pytest:

  - one test per learner call in the catalog's plans (the calls every exercise's checks make,
    duplicates merged, as ``benchmarks/where_time_goes.py`` counts them), on the same arguments:
    the learner's function is called on a copy of them; its value must match the reference
    solution's (computed here, once, before any pytest runs, so pytest pays only for the learner's
    call and the comparison), or it must raise as the reference did; and the array arguments must
    come back unchanged;
  - one test per quiz item, the learner's answer against the key.

It checks less than the grader does (one comparison per call, where the grader judges each call
for every property that names it), so the ratio it gives favours pytest.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import copy, functools, glob, importlib.util, os, pickle
import numpy as np
import pytest
import yaml

HERE = os.environ["LEARNER_DIR"]
with open(os.environ["BASELINE_CASES"], "rb") as handle:
    DATA = pickle.load(handle)


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LEARNER = {}
for _path in sorted(glob.glob(os.path.join(HERE, "*.py"))):
    LEARNER.update({name: value for name, value in vars(_load(_path)).items() if callable(value)})
GIVEN = {path: _load(path) for path in DATA["given"]}


def _argument(value):
    if isinstance(value, tuple) and value[:1] == ("given",):
        _, path, name, bound = value
        function = getattr(GIVEN[path], name)
        return functools.partial(function, **dict(bound)) if bound else function
    return copy.deepcopy(value)


def _agree(got, want):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want)
        for key in want:
            _agree(got[key], want[key])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for mine, theirs in zip(got, want):
            _agree(mine, theirs)
    elif isinstance(want, str):
        assert got == want
    else:
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.astype(complex), want.astype(complex), rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("call", DATA["calls"], ids=[f"{c[0]}-{i}" for i, c in enumerate(DATA["calls"])])
def test_learner_call_matches_reference(call):
    _, function, arguments, expected = call
    args = {name: _argument(value) for name, value in arguments.items()}
    before = {name: value.copy() for name, value in args.items() if isinstance(value, np.ndarray)}
    if expected[0] == "raises":
        with pytest.raises(Exception) as raised:
            LEARNER[function](**args)
        assert type(raised.value).__name__ == expected[1]
    else:
        _agree(LEARNER[function](**args), expected[1])
    for name, value in before.items():
        np.testing.assert_array_equal(args[name], value)


with open(os.path.join(HERE, "answers.yaml")) as handle:
    ANSWERS = yaml.safe_load(handle) or {}


@pytest.mark.parametrize("quiz,item", [(q, i) for q, items in DATA["quizzes"].items() for i in items])
def test_quiz_answer(quiz, item):
    mine, key = ANSWERS.get(quiz, {}).get(item), DATA["quizzes"][quiz][item]
    if isinstance(key, list):
        assert sorted(map(str, mine or [])) == sorted(map(str, key))
    elif isinstance(key, (int, float)) and not isinstance(key, bool):
        assert abs(float(mine) - key) <= 1e-6 * max(1.0, abs(key))
    else:
        assert str(mine).strip().lower() == str(key).strip().lower()
"""


def _plain(value: Any, given: str | None) -> Any:
    """A call's argument as pickle can carry it: a given function becomes a marker the suite resolves."""
    from grader.sandbox.calls import TrustedFunction

    if isinstance(value, TrustedFunction):
        assert given is not None, "a given function without the exercise's functions file"
        return ("given", given, value.name, tuple((name, array) for name, array in value.bound))
    return value


def _resolved(value: Any, given_module: Any) -> Any:
    """A marker's given function (bound to its arrays), for the reference's own call; anything else as it is."""
    import functools

    if not (isinstance(value, tuple) and value[:1] == ("given",)):
        return value
    function = getattr(given_module, value[2])
    return functools.partial(function, **dict(value[3])) if value[3] else function


def _expected(function: Any, arguments: dict[str, Any]) -> tuple[str, Any]:
    import copy

    import numpy as np

    with np.errstate(all="ignore"):
        try:
            return ("returns", function(**copy.deepcopy(arguments)))
        except Exception as exc:
            return ("raises", type(exc).__name__)


def write_suite(directory: Path) -> tuple[Path, Path, int]:
    """Write the suite and its cases into ``directory``; return their paths and the number of tests."""
    import importlib.util

    sys.path.insert(0, str(ROOT))
    from grader.engine.plan import build_plan, checks_to_run
    from grader.spec.loader import load_catalog
    from grader.spec.models import ImplementationExercise

    def load(path: Path) -> Any:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    catalog = load_catalog(ROOT / "exercises")
    calls, given_files = [], set()
    for exercise in catalog.assignment("all"):
        if not isinstance(exercise, ImplementationExercise):
            continue
        given = str(ROOT / exercise.functions) if exercise.functions else None
        given_module = load(Path(given)) if given else None
        reference = load(ROOT / exercise.reference_solution)
        plan = build_plan(exercise, checks_to_run(exercise, False))
        for key in plan.whole_keys:
            call = plan.table.calls[key]
            if call.on != "learner":
                continue
            arguments = {name: _plain(value, given) for name, value in call.args.items()}
            resolved = {name: _resolved(value, given_module) for name, value in arguments.items()}
            expected = _expected(getattr(reference, call.function), resolved)
            calls.append((exercise.id, call.function, arguments, expected))
        if given:
            given_files.add(given)
    quizzes: dict[str, Any] = {}
    for path in sorted((ROOT / "solutions").glob("*-answers.yaml")):
        quizzes.update(yaml.safe_load(path.read_text()))
    cases = directory / "baseline_cases.pickle"
    cases.write_bytes(pickle.dumps({"calls": calls, "given": sorted(given_files), "quizzes": quizzes}))
    suite = directory / "test_equivalent.py"
    suite.write_text(SUITE)
    return suite, cases, len(calls) + sum(len(items) for items in quizzes.values())
