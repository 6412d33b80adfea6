"""Expected values come from the exercise's own reference solution, run like a learner's file, asked once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.spec.loader import load_catalog
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]

SPEC = """\
id: double
kind: implementation
title: Double
prompt: Write double(x, factor=2.0).
entries:
  double:
    signature: double(x, factor=2.0)
    args: {x: float_array, factor: float}
cases:
  basic:
    - examples:
        - {x: [1.0, 2.0]}
        - {x: [3.0], factor: 3.0}
checks:
  - id: finite
    property: finite
    cases: [basic]
  - id: right-values
    property: matches-reference
    cases: [basic]
    visibility: public
reference_solution: solutions/double/reference.py
"""
LEARNER = b"import numpy as np\ndef double(x, factor=2.0):\n    return np.asarray(x, dtype=float) * factor\n"


def _project(tmp_path: Path, reference: str, spec: str = SPEC) -> Path:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "solutions" / "double").mkdir(parents=True)
    (tmp_path / "solutions" / "double" / "reference.py").write_text(reference)
    (tmp_path / "exercises" / "double.yaml").write_text(spec)
    return tmp_path


def _grade(exercise, factory: InProcessFactory, memo: GradingMemo, root: Path):  # type: ignore[no-untyped-def]
    source = SourceModule({"mine.py": LEARNER}, "mine.py")
    return grade_implementation(exercise, source, factory, memo=memo, references=root)


def test_expected_values_are_asked_of_the_reference_once_and_kept_for_a_later_session(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = _project(tmp_path, "import numpy as np\ndef double(x, factor=2.0):\n    return np.asarray(x) * factor\n")
    exercise = load_catalog(root / "exercises").exercise("double")
    factory = InProcessFactory()
    memo = GradingMemo()
    for _ in range(2):  # the second submission of the session asks the reference nothing
        result = _grade(exercise, factory, memo, root)
        assert result.status == "passed", result.reason
    assert sorted(p._module_name for p in factory.opened) == ["mine.py", "mine.py", "reference.py"]
    learner_calls = factory.opened[0].calls_received
    assert learner_calls == 2  # only the learner's own calls went to the learner's process

    later = InProcessFactory()
    assert _grade(exercise, later, GradingMemo(), root).status == "passed"
    assert [p._module_name for p in later.opened] == ["mine.py"]  # the reference's answers came from disk


def test_a_reference_that_raises_is_an_error_of_the_exercise_never_the_learners(tmp_path: Path) -> None:
    reference = (
        "import numpy as np\ndef double(x, factor=2.0):\n"
        "    if factor == 3.0:\n        raise ValueError('not written for 3 yet')\n"
        "    return np.asarray(x) * factor\n"
    )
    root = _project(tmp_path, reference)
    exercise = load_catalog(root / "exercises").exercise("double")
    result = _grade(exercise, InProcessFactory(), GradingMemo(), root)
    checks = {check.id: check for check in result.checks}
    assert checks["finite"].status == "passed"
    wrong = checks["right-values"]
    assert wrong.status == "error" and wrong.diagnosis is None
    assert "reference solution raised ValueError: not written for 3 yet in double()" in wrong.reason
    assert "not of your code" in wrong.reason and "double(x=array([3.]), factor=3)" in wrong.reason


def test_a_check_may_compare_with_a_helper_of_the_reference_that_is_not_an_entry(tmp_path: Path) -> None:
    reference = (
        "import numpy as np\ndef double(x, factor=2.0):\n    return triple(x) * 0\n"
        "def twice(x, factor=2.0):\n    return np.asarray(x) * factor\n"
    )
    spec = SPEC.replace("    property: matches-reference\n", "    property: matches-reference\n    reference: twice\n")
    root = _project(tmp_path, reference, spec)
    exercise = load_catalog(root / "exercises").exercise("double")
    assert _grade(exercise, InProcessFactory(), GradingMemo(), root).status == "passed"


def test_a_reference_without_the_named_function_is_a_spec_error_at_its_key(tmp_path: Path) -> None:
    from grader.errors import SpecError

    spec = SPEC.replace("    property: matches-reference\n", "    property: matches-reference\n    reference: twice\n")
    root = _project(tmp_path, "def double(x, factor=2.0):\n    return x\n", spec)
    with pytest.raises(SpecError) as raised:
        load_catalog(root / "exercises")
    assert raised.value.line == spec.splitlines().index("    reference: twice") + 1
    assert "names 'twice', which solutions/double/reference.py does not define at top level" in str(raised.value)


@pytest.mark.slow
def test_validate_names_the_exercise_check_and_case_a_reference_fails_on_and_exits_2(tmp_path: Path) -> None:
    reference = (
        "import numpy as np\ndef double(x, factor=2.0):\n"
        "    if factor == 3.0:\n        return np.array(['three'])\n"
        "    return np.asarray(x) * factor\n"
    )
    root = _project(tmp_path, reference)
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "--exercises", "exercises", "validate"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    said = "double: check right-values: the reference solution solutions/double/reference.py returned a value"
    assert f"{said} that is not a number" in lines[0]
    assert "double(x=array([3.]), factor=3)" in lines[0]


def test_witnesses_of_a_class_are_verified_by_one_reference_process_the_session_keeps(catalog, cache_dir: Path) -> None:  # type: ignore[no-untyped-def]
    exercise = catalog.exercise("divide-by-sum-breaks")
    factory, memo = InProcessFactory(), GradingMemo()
    for tail in ("0.25", "0.5", "0.75"):  # each learner's own counterexample: a call the reference never saw
        source = f"import numpy as np\ndef divide_by_sum_counterexample():\n    return np.array([3.0, -2.0, {tail}])\n"
        files = {"mine.py": source.encode()}
        result = grade_implementation(exercise, SourceModule(files, "mine.py"), factory, memo=memo, references=ROOT)
        assert result.status == "passed", result.reason
    references = [process for process in factory.opened if process._module_name == "reference.py"]
    assert len(references) == 1 and references[0].alive
    memo.close()
    assert not references[0].alive


def test_a_handout_answers_file_that_lacks_a_call_is_an_error_of_the_exercise(tmp_path: Path) -> None:
    spec = SPEC.replace("reference_solution: solutions/double/reference.py", "reference_answers: answers.json")
    root = _project(tmp_path, "", spec)
    (root / "answers.json").write_text('{"format": 1, "answers": {}}\n')
    exercise = load_catalog(root / "exercises").exercise("double")
    result = _grade(exercise, InProcessFactory(), GradingMemo(), root)
    wrong = next(check for check in result.checks if check.id == "right-values")
    assert wrong.status == "error" and "the handout's reference answers do not cover this call" in wrong.reason
