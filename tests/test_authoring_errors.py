"""Authoring mistakes: each is one line naming the spec file and the line of the offending key, exit 2.

One table: a tiny valid spec, one mistake written into it, the line it must
be reported at (the line holding a marker text) and what the message says.
The command runs through click's test runner, as ``grader --exercises DIR``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

SPEC = """\
id: double
kind: implementation
title: Double
prompt: Write double(x, factor=2.0).
entries:
  double:
    signature: double(x, factor=2.0)
    args: {x: float_array, factor: float}
examples:
  - call: double(np.array([1.0, 2.0]))
    result: array([2., 4.])
cases:
  basic:
    - examples:
        - {x: [1.0, 2.0]}
        - {x: [3.0], factor: 3.0}
    - random:
        count: 4
        dims: {n: [2, 3]}
        args:
          x: {shape: [[n]], scale: [1.0]}
checks:
  - id: finite
    property: finite
    cases: [basic]
  - id: right-values
    property: matches-reference
    entry: double
    cases: [basic]
reference_solution: solutions/double/reference.py
known_wrong:
  - id: halves
    path: solutions/double/wrong_halves.py
    misconception: divides instead of multiplying
    must_fail: [finite]
"""

QUIZ = """\
id: tiny-quiz
kind: quiz
title: Tiny quiz
questions:
  - id: pick
    prompt: Which?
    type: single
    options:
      - {text: this one, correct: true, reason: it is right}
      - {text: that one, reason: it is wrong}
"""

REFERENCE = "import numpy as np\n\n\ndef double(x, factor=2.0):\n    return np.asarray(x, dtype=float) * factor\n"
WRONG = "import numpy as np\n\n\ndef double(x, factor=2.0):\n    return np.asarray(x, dtype=float) / factor\n"

# (id, file, old text, new text, marker on the reported line (nth occurrence), expected words)
MISTAKES = [
    (
        "unknown-entry",
        "spec",
        "    entry: double\n",
        "    entry: doubel\n",
        ("entry: doubel", 0),
        "checks[1].entry: names the entry 'doubel', which is not in entries; did you mean 'double'?",
    ),
    (
        "unknown-case-set",
        "spec",
        "    entry: double\n    cases: [basic]",
        "    entry: double\n    cases: [basci]",
        ("[basci]", 0),
        "checks[1].cases[0]: names the case set 'basci', which is not in cases; did you mean 'basic'?",
    ),
    (
        "unknown-must-fail",
        "spec",
        "must_fail: [finite]",
        "must_fail: [finit]",
        ("[finit]", 0),
        "known_wrong[0].must_fail[0]: names the check 'finit', which does not exist; did you mean 'finite'?",
    ),
    (
        "duplicate-check-id",
        "spec",
        "  - id: right-values",
        "  - id: finite",
        ("id: finite", 1),
        "checks[1].id: the check id 'finite' is also used by checks[0]",
    ),
    (
        "unknown-gate",
        "spec",
        "reference_solution:",
        "gate: finit\nreference_solution:",
        ("gate:", 0),
        "gate: names the check 'finit', which does not exist; did you mean 'finite'?",
    ),
    (
        "random-misspelt-key",
        "spec",
        "scale: [1.0]",
        "scal: [1.0]",
        ("scal:", 0),
        "cases.basic[1].random.args.x.scal: unknown key 'scal'; did you mean 'scale'?",
    ),
    (
        "random-bad-count",
        "spec",
        "count: 4",
        "count: 0",
        ("count: 0", 0),
        "cases.basic[1].random.count: must be greater than 0",
    ),
    (
        "random-unknown-top-key",
        "spec",
        "count: 4",
        "cuont: 4",
        ("cuont", 0),
        "cases.basic[1].random.cuont: unknown key 'cuont'; did you mean 'count'?",
    ),
    (
        "random-unknown-dim",
        "spec",
        "shape: [[n]]",
        "shape: [[m]]",
        ("[[m]]", 0),
        "cases.basic[1].random.args.x.shape[0][0]: the size 'm' is not one of dims",
    ),
    (
        "random-unknown-argument",
        "spec",
        "          x: {shape",
        "          y: {shape",
        ("y: {shape", 0),
        "cases.basic[1].random.args.y: 'y' is not an argument of double(x, factor=2.0)",
    ),
    (
        "random-missing-argument",
        "spec",
        "          x: {shape: [[n]], scale: [1.0]}\n",
        "          factor: [1.0]\n",
        ("args:", 1),
        "cases.basic[1].random.args: draws no 'x', which double(x, factor=2.0) needs",
    ),
    (
        "example-unknown-argument",
        "spec",
        "{x: [3.0], factor: 3.0}",
        "{x: [3.0], factr: 3.0}",
        ("factr", 0),
        (
            "cases.basic[0].examples[1].factr: 'factr' is not an argument of double(x, factor=2.0); "
            "did you mean 'factor'?"
        ),
    ),
    (
        "example-missing-argument",
        "spec",
        "{x: [3.0], factor: 3.0}",
        "{factor: 3.0}",
        ("{factor: 3.0}", 0),
        "cases.basic[0].examples[1]: gives no 'x', which double(x, factor=2.0) needs",
    ),
    (
        "args-not-the-signature",
        "spec",
        "args: {x: float_array, factor: float}",
        "args: {x: float_array}",
        ("args:", 0),
        "entries.double.args: names x, but double(x, factor=2.0) takes x, factor",
    ),
    (
        "bad-signature",
        "spec",
        "signature: double(x, factor=2.0)",
        "signature: double[x]",
        ("signature:", 0),
        "entries.double.signature: 'double[x]' is not a Python signature of double(...)",
    ),
    (
        "check-without-cases",
        "spec",
        "    property: finite\n    cases: [basic]\n",
        "    property: finite\n",
        ("- id: finite", 0),
        "checks[0]: has no 'cases:', so double() would be called without its arguments (x)",
    ),
    (
        "unknown-reference",
        "spec",
        "    property: matches-reference\n",
        "    property: matches-reference\n    reference: doubel\n",
        ("reference: doubel", 0),
        "checks[1].reference: names 'doubel', which solutions/double/reference.py does not define at top level; "
        "did you mean 'double'?",
    ),
    (
        "no-reference-solution",
        "spec",
        "reference_solution: solutions/double/reference.py\n",
        "",
        ("property: matches-reference", 0),
        "checks[1].property: matches-reference compares with the exercise's reference solution, but the spec names "
        "no reference_solution",
    ),
    (
        "unknown-witness-verifier",
        "spec",
        "    property: finite\n    cases: [basic]\n",
        "    property: witness\n    verifier: divide-by-summ\n    method: double\n    cases: [basic]\n",
        ("verifier:", 0),
        (
            "checks[0].verifier: names the verifier 'divide-by-summ', which the grader does not have; "
            "did you mean 'divide-by-sum'?"
        ),
    ),
    (
        "duplicate-yaml-key",
        "spec",
        "title: Double\n",
        "title: Double\nprompt: twice\n",
        ("prompt: Write", 0),
        "the key 'prompt' is written twice in one mapping (first on line 4)",
    ),
    (
        "duplicate-key-in-flow-mapping",
        "spec",
        "{x: [1.0, 2.0]}",
        "{x: [1.0, 2.0], x: [5.0]}",
        ("x: [5.0]", 0),
        "the key 'x' is written twice in one mapping",
    ),
    (
        "missing-solution-file",
        "spec",
        "path: solutions/double/wrong_halves.py",
        "path: solutions/double/gone.py",
        ("gone.py", 0),
        "known_wrong[0].path: the solution file 'solutions/double/gone.py' does not exist",
    ),
    (
        "unknown-property",
        "spec",
        "property: finite",
        "property: finit",
        ("property: finit", 0),
        "checks[0].property: unknown property 'finit'; did you mean 'finite'?",
    ),
    (
        "answer-in-a-choice-question",
        "quiz",
        "    type: single\n",
        "    type: single\n    answer: A\n",
        ("answer: A", 0),
        (
            "questions[0].answer: unknown key 'answer': a choice question has no answer key; "
            "mark each right option with 'correct: true'"
        ),
    ),
    (
        "numeric-answer-not-a-number",
        "quiz",
        (
            "    type: single\n    options:\n      - {text: this one, correct: true, reason: it is right}\n"
            "      - {text: that one, reason: it is wrong}\n"
        ),
        "    type: numeric\n    answer: E\n    tolerance: 0.1\n    reason_correct: yes\n    reason_wrong: no\n",
        ("answer: E", 0),
        "questions[0].answer: must be a valid number",
    ),
]


def _write(tmp_path: Path, which: str, old: str, new: str) -> tuple[Path, str]:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "solutions" / "double").mkdir(parents=True)
    (tmp_path / "solutions" / "double" / "reference.py").write_text(REFERENCE)
    (tmp_path / "solutions" / "double" / "wrong_halves.py").write_text(WRONG)
    spec, quiz = SPEC, QUIZ
    if which == "spec":
        assert old in spec
        spec = spec.replace(old, new, 1)
    else:
        assert old in quiz
        quiz = quiz.replace(old, new, 1)
    (tmp_path / "exercises" / "double.yaml").write_text(spec)
    (tmp_path / "exercises" / "tiny-quiz.yaml").write_text(quiz)
    return tmp_path / "exercises" / (
        "double.yaml" if which == "spec" else "tiny-quiz.yaml"
    ), spec if which == "spec" else quiz


def _line(text: str, marker: str, nth: int) -> int:
    lines = [number for number, line in enumerate(text.splitlines(), 1) if marker in line]
    return lines[nth]


def _grader(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("which", "old", "new", "marker", "expected"), [case[1:] for case in MISTAKES], ids=[case[0] for case in MISTAKES]
)
def test_authoring_mistake_is_one_line_at_its_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    which: str,
    old: str,
    new: str,
    marker: tuple[str, int],
    expected: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    path, text = _write(tmp_path, which, old, new)
    code, stderr = _grader("--exercises", "exercises", "validate")
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    relative = path.relative_to(tmp_path)
    assert stderr.startswith(f"grader: error: {relative}:{_line(text, *marker)}: "), stderr
    assert expected in stderr


def test_the_unbroken_specs_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's base specs are valid: each mistake above is the only one."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "spec", "", "")
    code, stderr = _grader("--exercises", "exercises", "list")
    assert code == 0, stderr


def test_assignment_naming_an_unknown_exercise_is_reported_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "spec", "", "")
    (tmp_path / "exercises" / "unit.yaml").write_text(
        "id: unit\nkind: assignment\ntitle: Unit\nexercises:\n  - double\n  - tiny-quizz\n"
    )
    code, stderr = _grader("--exercises", "exercises", "list")
    assert code == 2
    assert stderr.startswith(
        "grader: error: exercises/unit.yaml:6: exercises[1]: unknown exercise 'tiny-quizz'; did you mean 'tiny-quiz'?"
    )


def test_an_id_used_by_two_files_is_reported_at_the_second_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "spec", "", "")
    (tmp_path / "exercises" / "z-copy.yaml").write_text("# a copy\n" + QUIZ)
    code, stderr = _grader("--exercises", "exercises", "list")
    assert code == 2
    assert stderr.startswith("grader: error: exercises/z-copy.yaml:2: id: 'tiny-quiz' is also used by "), stderr


@pytest.mark.parametrize(
    ("old", "new", "marker"),
    [
        ("{f: softmax, z: [0.5, -1.0, 2.0]}", "{f: softmaks, z: [0.5, -1.0, 2.0]}", "softmaks"),
        ("          f: [hard_argmax]", "          f: [hard_argmx]", "hard_argmx"),
        ("{f: {function: linear, A: [[2.0, 1.0]", "{f: {function: lineer, A: [[2.0, 1.0]", "lineer"),
    ],
    ids=["example", "random", "bound"],
)
def test_a_case_naming_a_function_the_given_file_lacks_is_one_line_at_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, marker: str
) -> None:
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "exercises").mkdir()
    spec = (root / "exercises" / "argmax-zero-gradient.yaml").read_text()
    assert old in spec
    spec = spec.replace(old, new, 1)
    (tmp_path / "exercises" / "argmax-zero-gradient.yaml").write_text(spec)
    shutil.copytree(root / "solutions" / "argmax-zero-gradient", tmp_path / "solutions" / "argmax-zero-gradient")
    monkeypatch.chdir(tmp_path)
    code, stderr = _grader("--exercises", "exercises", "validate")
    assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith(f"grader: error: exercises/argmax-zero-gradient.yaml:{_line(spec, marker, 0)}: "), stderr
    assert f"names the function {marker!r}, which solutions/argmax-zero-gradient/given.py does not define" in stderr
