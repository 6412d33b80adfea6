"""Any answers file is graded or refused with a reason naming the file (and line); never a grader error.

The generated documents cover what YAML and JSON can say: huge and tiny
numbers, every tag (``!!python/...`` included), anchors and aliases, merge
keys, non-string and duplicate keys, broken syntax, byte-order marks and
several documents. They are graded through ``GradingSession.grade``, the
function ``grader grade`` calls, and every report format is rendered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grader.report import FORMATS, render
from grader.submission.answers import MAX_BYTES, MAX_VALUES, AnswersProblem, load_answers
from tests.cpu_time import cpu_seconds

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = {
    "why-softmax-quiz": ["divide-by-sum-fails", "argmax-fails", "square-fails", "exp-first", "argmax-gradient"],
    "softmax-bridge-quiz": ["most-probability", "temperature-up", "why-sqrt-dk", "largest-weight", "where-softmax"],
}
GENERATED = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- what a YAML document can hold ---------------------------------------------

YAML_SCALARS = [
    "0.839",
    "0.83898",
    "A",
    "c",
    "'B'",
    "A, B",
    "1" * 310,
    "-" + "9" * 400,
    "1" * 5000,
    "0x" + "f" * 1500,
    "0b101",
    "0o17",
    "017",
    "1_000",
    "190:20:30",
    ":".join(["1"] * 700),
    "1e-400",
    "1e400",
    "-0.0",
    "5e-324",
    ".nan",
    ".NaN",
    ".inf",
    "-.inf",
    "+.inf",
    "._",
    ".5",
    "1.",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "~",
    "null",
    "",
    "2001-12-14",
    "2001-13-45",
    "2001-12-14t21:59:43.10-05:00",
    "2001-02-30 25:61:61",
    "!!binary aGVsbG8=",
    "!!binary '!!!'",
    "!!python/tuple [1]",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system",
    "!!int x",
    "!!int ''",
    "!!int " + "7" * 2000,
    "!!float x",
    "!!float ''",
    "!!bool maybe",
    "!!timestamp maybe",
    "!!null x",
    "!!str 5",
    "!!set {A, B}",
    "!!omap [{a: 1}, {b: 2}]",
    "!!pairs [[a, 1]]",
    "!!omap [1]",
    "!foo bar",
    "!<tag:x,2000:y> z",
    "'it''s'",
    '"\\ud800\\x1b[31m"',
    '"\\U0001F600 \\u202e"',
    "é",
    "'\t'",
    "*a",
    "&a 1",
    "&b [A, *b]",
    "[" * 70 + "]" * 70,
    "{a: " * 70 + "1" + "}" * 70,
    "|\n  two\n  lines",
    ">-\n  folded",
    "? x",
    "'" + "x" * 3000 + "'",
    "[" + ", ".join(["C"] * 400) + "]",
    "[A, [B], {C: D}, 3, null]",
]
YAML_KEYS = [
    "<<",
    "1",
    "null",
    ".nan",
    "2001-01-01",
    "yes",
    "'A'",
    "? [a, b]",
    "[a]",
    "{a: 1}",
    "!!python/tuple [1]",
    "&k key",
    "*k",
    "'\\ud800'",
    "\ufeffkey",
    "x" * 1100,
]
KEYS = st.sampled_from(YAML_KEYS + [q for questions in QUESTIONS.values() for q in questions])
PREFIXES = st.sampled_from([""] * 8 + ["&a ", "!!set ", "!!omap ", "!!map ", "!!seq ", "!!python/dict ", "!x "])


def _yaml_trees() -> st.SearchStrategy[Any]:
    """A tree of leaves (YAML text) and ``(kind, items, flow, prefix)`` collections."""
    words = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8)
    leaves = (
        st.sampled_from(YAML_SCALARS)
        | st.integers(-(10**400), 10**400).map(str)
        | st.floats().map(repr)
        | words
        | words.map(json.dumps)
        | st.text(max_size=4)
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.tuples(st.just("seq"), st.lists(children, max_size=4), st.booleans(), PREFIXES),
            st.tuples(st.just("map"), st.lists(st.tuples(KEYS, children), max_size=4), st.booleans(), PREFIXES),
        ),
        max_leaves=12,
    )


def _render(tree: Any, indent: int, flow: bool) -> str:
    """The tree as YAML text: flow collections inline, block ones as indented lines (each ending in a newline)."""
    if isinstance(tree, str):
        return tree
    kind, items, own_flow, prefix = tree
    pad = " " * indent
    if flow or own_flow or not items:
        if kind == "seq":
            return prefix + "[" + ", ".join(_render(item, 0, True) for item in items) + "]"
        return prefix + "{" + ", ".join(f"{key}: {_render(value, 0, True)}" for key, value in items) + "}"
    lines = []
    for item in items:
        head = f"{pad}- " if kind == "seq" else f"{pad}{item[0]}:"
        value = item if kind == "seq" else item[1]
        if isinstance(value, tuple) and value[1] and not value[2]:
            lines.append(f"{head}{' ' if kind == 'map' else ''}{value[3]}\n{_render(value, indent + 2, False)}")
        else:
            lines.append(f"{head} {_render(value, 0, True)}\n")
    return prefix + "\n" + "".join(lines) if prefix and not indent else "".join(lines)


@st.composite
def yaml_documents(draw: st.DrawFn) -> bytes:
    """An answers file: mostly quiz ids over question ids, sometimes anything, sometimes broken or wrapped."""
    if draw(st.booleans()):
        quizzes = draw(st.lists(st.sampled_from(list(QUESTIONS)), min_size=1, max_size=2, unique=True))
        tree = (
            "map",
            [
                (
                    quiz,
                    (
                        "map",
                        [
                            (question, draw(_yaml_trees()))
                            for question in draw(st.lists(st.sampled_from(QUESTIONS[quiz]), max_size=5))
                        ],
                        False,
                        "",
                    ),
                )
                for quiz in quizzes
            ],
            False,
            "",
        )
    else:
        tree = draw(_yaml_trees())
    text = _render(tree, 0, False)
    if draw(st.integers(0, 3)) == 0:  # a broken document: one character in the wrong place
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(list(":-[]{}#&*!|>'\"%@`,? \t\n"))) + text[at:]
    text = draw(st.sampled_from(["", "\ufeff", "%YAML 1.1\n---\n", "--- !!map\n"])) + text
    text += draw(st.sampled_from([""] * 6 + ["...\n", "---\nsecond: document\n", "\n--- " + "x" * 10]))
    return text.encode("utf-8", "surrogatepass")


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6000), 10**6000)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["A", "b", "A, B", "0.839", "NaN"])
)


@st.composite
def json_documents(draw: st.DrawFn) -> bytes:
    """JSON with quiz ids over question ids (or any value), some numbers Python's json refuses by default."""
    values = st.recursive(
        JSON_LEAVES,
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
        max_leaves=10,
    )
    answers = st.dictionaries(st.sampled_from(QUESTIONS["softmax-bridge-quiz"] + QUESTIONS["why-softmax-quiz"]), values)
    data = draw(
        st.dictionaries(st.sampled_from(list(QUESTIONS)) | st.text(max_size=4), answers | values, max_size=3)
        | st.dictionaries(st.sampled_from(list(QUESTIONS)), answers, min_size=1)
        | values
    )
    text = _dumps(data)
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(list('[]{}",:0e-\\'))) + text[at:]
    return (draw(st.sampled_from(["", "", "\ufeff", "\ufeff\ufeff"])) + text).encode("utf-8", "surrogatepass")


def _dumps(data: Any) -> str:
    """``json.dumps`` for integers of any length (its own refuses past 4,300 digits)."""
    if isinstance(data, bool) or data is None or not isinstance(data, (int, list, dict)):
        return json.dumps(data)
    if isinstance(data, int):
        return str(data) if abs(data).bit_length() < 14000 else "7" * 5000
    if isinstance(data, list):
        return "[" + ", ".join(_dumps(item) for item in data) + "]"
    return "{" + ", ".join(f"{json.dumps(key)}: {_dumps(value)}" for key, value in data.items()) + "}"


# -- grading any of it -----------------------------------------------------------


def _grade_file(session, data: bytes, suffix: str) -> None:  # type: ignore[no-untyped-def]
    """Grade ``data`` as an answers file, by what it attempts and as the whole course: never a grader error.

    A refused file scores 0 on every quiz, each saying why with the file's name.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"answers{suffix}"
        path.write_bytes(data)
        try:
            load_answers(path)
            refused = None
        except AnswersProblem as problem:
            refused = str(problem)
            assert refused.startswith(f"{path.name}: ") and "\n" not in refused
        for assignment in (None, "all"):
            report = session.grade(path, assignment=assignment)
            for exercise in report.exercises:
                assert exercise.reason and all(check.reason for check in exercise.checks)
                if exercise.kind == "quiz":
                    assert len(exercise.reason) < 2000 and all(len(check.reason) < 2000 for check in exercise.checks)
                    if refused:
                        assert exercise.status == "error" and exercise.score == 0 and refused in exercise.reason
            for format_name in FORMATS:
                render(report, format_name).encode("utf-8")


@GENERATED
@given(data=yaml_documents())
@example(data=b"softmax-bridge-quiz:\n  largest-weight: " + b"1" * 310 + b"\n")
@example(data=b"softmax-bridge-quiz:\n  largest-weight: " + b"1" * 5000 + b"\n")
@example(data=b"softmax-bridge-quiz:\n  largest-weight: 2001-13-45\n  most-probability: !!int x\n")
def test_any_yaml_answers_file_is_graded_or_refused(session, data: bytes) -> None:
    _grade_file(session, data, ".yaml")


@GENERATED
@given(data=json_documents())
@example(data=b'{"softmax-bridge-quiz": {"largest-weight": ' + b"1" * 310 + b"}}")
@example(data=b'{"softmax-bridge-quiz": {"largest-weight": ' + b"1" * 5000 + b"}}")
def test_any_json_answers_file_is_graded_or_refused(session, data: bytes) -> None:
    _grade_file(session, data, ".json")


@GENERATED
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".yaml", ".yml", ".json"]))
def test_any_bytes_as_an_answers_file_are_graded_or_refused(session, data: bytes, suffix: str) -> None:
    _grade_file(session, data, suffix)


# -- what the learner reads --------------------------------------------------------


def _largest_weight(session, tmp_path: Path, name: str, text: str) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text)
    report = session.grade(path, exercise_ids=["softmax-bridge-quiz"])
    (quiz,) = report.exercises
    return next(check for check in quiz.checks if check.id == "largest-weight").reason


NUMERIC_ANSWERS = [  # (suffix, the answer as written, what the reason says)
    (".yaml", "1" * 310, "11111111111111111111...11111111 (310 digits) is far too large; give one finite number"),
    (".yaml", "1" * 5000, "11111111111111111111...11111111 (5000 digits) is far too large; give one finite number"),
    (".yaml", "-" + "9" * 400, "-9999999999999999999...99999999 (400 digits) is far too large"),
    (".yaml", "1e-400", "Not quite: 0 is not within 0.001"),
    (".yaml", ".nan", "nan is not a number; give one finite number"),
    (".yaml", "-.inf", "-inf is infinite; give one finite number"),
    (".yaml", "yes", "true is a yes/no value, not a number"),
    (".yaml", "'0.839'", "Right: 0.839 is within 0.001"),
    (".yaml", "'0,839'", "'0,839' is text, not a number"),
    (".yaml", "[0.839]", "[0.839] is not a number"),
    (".yaml", "2001-13-45", "'2001-13-45' is text, not a number"),
    (".yaml", "2001-12-14", "the date 2001-12-14 is not a number"),
    (".yaml", "!!binary aGVsbG8=", "binary data (5 bytes) is not a number"),
    (".json", "1" * 310, "11111111111111111111...11111111 (310 digits) is far too large; give one finite number"),
    (".json", "1" * 5000, "11111111111111111111...11111111 (5000 digits) is far too large; give one finite number"),
    (".json", "1e-400", "Not quite: 0 is not within 0.001"),
    (".json", "NaN", "nan is not a number; give one finite number"),
    (".json", "-Infinity", "-inf is infinite; give one finite number"),
    (".json", "true", "true is a yes/no value, not a number"),
    (".json", '"0.839"', "Right: 0.839 is within 0.001"),
    (".json", '{"a": 1}', "a mapping of 1 key is not a number"),
]


@pytest.mark.parametrize(
    ("suffix", "written", "expected"),
    NUMERIC_ANSWERS,
    ids=[f"{suffix[1:]}-{written[:12]}" for suffix, written, _ in NUMERIC_ANSWERS],
)
def test_numeric_answer_of_any_form_is_graded_saying_what_was_written(
    session, tmp_path: Path, suffix: str, written: str, expected: str
) -> None:
    if suffix == ".json":
        text = f'{{"softmax-bridge-quiz": {{"largest-weight": {written}}}}}'
    else:
        text = f"softmax-bridge-quiz:\n  largest-weight: {written}\n"
    assert expected in _largest_weight(session, tmp_path, f"answers{suffix}", text)


def test_choice_answer_of_many_wrong_letters_is_shortened(session, tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(
        "softmax-bridge-quiz:\n  where-softmax: [" + ", ".join(["Z"] * 900) + "]\n"
        "  most-probability: '" + "x" * 5000 + "'\n"
    )
    (quiz,) = session.grade(path, exercise_ids=["softmax-bridge-quiz"]).exercises
    reasons = {check.id: check.reason for check in quiz.checks}
    assert reasons["where-softmax"].startswith("Z, Z, Z (and 897 more) are not options")
    assert "(5000 characters) is not an option" in reasons["most-probability"]
    assert len(reasons["most-probability"]) < 200


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.yaml", "q:\n  x: !!int x\n", "a.yaml: 'x' is not an integer (line 2)"),
        ("a.yaml", "q:\n  x: !!bool maybe\n", "a.yaml: 'maybe' is not true or false (line 2)"),
        ("a.yaml", "q:\n  x: !!python/object/apply:os.system ['true']\n", "could not determine a constructor"),
        (
            "a.yaml",
            "q: A\n---\nr: B\n",
            "a.yaml: not valid YAML: expected a single document in the stream, but found another document (line 2)",
        ),
        ("a.yaml", "q: &a [A]\nr: *a\n", "a.yaml: YAML aliases (*name) are not allowed; write the value out (line 2)"),
        (
            "a.yaml",
            "q:\n  x: [" + ", ".join(["A"] * MAX_VALUES) + "]\n",
            f"holds more than {MAX_VALUES} values (line 2)",
        ),
        ("a.yaml", "q:\n  x: " + "[" * 65 + "]" * 65 + "\n", "nested more than 64 levels deep (line 2)"),
        ("a.json", '{"q":\n [' + ", ".join(["1"] * MAX_VALUES) + "]}", f"holds more than {MAX_VALUES} values (line 2)"),
        ("a.json", '{"q":\n\n' + "[" * 65 + "]" * 65 + "}", "a.json: nested more than 64 levels deep (line 3)"),
        ("a.json", '{"q": 1,\n"r": }', "a.json: not valid JSON: Expecting value (line 2)"),
    ],
    ids=[
        "bad-int",
        "bad-bool",
        "python-tag",
        "two-documents",
        "alias",
        "many-yaml",
        "deep-yaml",
        "many-json",
        "deep-json",
        "bad-json",
    ],
)
def test_refused_answers_file_names_file_and_line(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(AnswersProblem) as refused:
        load_answers(path)
    assert expected in str(refused.value) and str(refused.value).startswith(f"{name}: ")


PATHOLOGICAL = {
    "nested-flow": lambda size: "q: " + "[" * (size // 2) + "]" * (size // 2),
    "nested-flow-spread": lambda size: "q: [" + ", ".join(["[[[[[1]]]]]"] * (size // 13)) + "]",
    "aliases": lambda size: "a: &a [x]\n" + "b: [" + ", ".join(["*a"] * (size // 4)) + "]",
    "anchors": lambda size: "q: [" + ", ".join(f"&a{i} 1" for i in range(size // 10)) + "]",
    "digits": lambda size: "softmax-bridge-quiz:\n  largest-weight: " + "9" * (size - 60),
    "keys": lambda size: "".join(f"k{i}: A\n" for i in range(size // 9)),
    "block-sequences": lambda size: "- " * (size // 2),
    "json-nested": lambda size: '{"q": ' + "[" * (size // 2) + "]" * (size // 2) + "}",
    "json-digits": lambda size: '{"softmax-bridge-quiz": {"largest-weight": ' + "9" * (size - 60) + "}}",
}


@pytest.mark.parametrize("size", [1 << 20, MAX_BYTES - 100], ids=["1-MiB", "just-under-the-limit"])
@pytest.mark.parametrize("kind", sorted(PATHOLOGICAL))
def test_pathological_answers_file_is_refused_or_read_well_under_a_second(tmp_path: Path, kind: str, size: int) -> None:
    path = tmp_path / ("answers.json" if kind.startswith("json") else "answers.yaml")
    path.write_text(PATHOLOGICAL[kind](size)[:size])
    problems: list[AnswersProblem] = []

    def load() -> None:
        try:
            load_answers(path)
        except AnswersProblem as problem:
            problems.append(problem)

    assert cpu_seconds(load) < 1
    for problem in problems:
        assert str(problem).startswith(f"{path.name}: ")
        if size > MAX_BYTES:
            assert f"larger than {MAX_BYTES // 1024} KiB" in str(problem)


# -- the command line and a class ------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


YAML_WEIGHT = "softmax-bridge-quiz:\n  largest-weight: {}\n"
JSON_WEIGHT = '{{"softmax-bridge-quiz": {{"largest-weight": {}}}}}'


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("answers.yaml", YAML_WEIGHT.format("1" * 310), "(310 digits) is far too large"),
        ("answers.json", JSON_WEIGHT.format("1" * 5000), "(5000 digits) is far too large"),
        ("answers.yaml", YAML_WEIGHT.format("1" * 5000), "(5000 digits) is far too large"),
        ("answers.yaml", YAML_WEIGHT.format("!!float x"), "answers.yaml: 'x' is not a number (line 2)"),
        (
            "answers.yaml",
            YAML_WEIGHT.format(0.5) + "# x\n" * (MAX_BYTES // 4),
            f"answers.yaml: the answers file is larger than {MAX_BYTES // 1024} KiB",
        ),
    ],
    ids=["310-digits-yaml", "5000-digits-json", "5000-digits-yaml", "refused-with-line", "too-large"],
)
def test_grade_command_grades_a_hostile_answers_file_and_exits_1(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    done = _cli("grade", str(path), "--exercise", "softmax-bridge-quiz", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (quiz,) = json.loads(done.stdout)["exercises"]
    assert quiz["score"] == 0
    # a number it could read is judged per question; a file it could not read is explained once, on the quiz
    assert expected in quiz["reason"] or any(expected in check["reason"] for check in quiz["checks"]), quiz
    plain = _cli("grade", str(path))  # grading what the file attempts
    assert plain.returncode == 1 and "Traceback" not in plain.stderr
    assert expected in " ".join(plain.stdout.split())


@pytest.mark.slow
def test_batch_grades_hostile_answers_files_as_each_learners_work(tmp_path: Path) -> None:
    learners = tmp_path / "class"
    (learners / "ann").mkdir(parents=True)
    (learners / "ann" / "answers.yaml").write_text("softmax-bridge-quiz:\n  largest-weight: " + "1" * 5000 + "\n")
    (learners / "bob.json").write_text('{"softmax-bridge-quiz": {"largest-weight": ' + "1" * 310 + "}}")
    (learners / "cid.yaml").write_text("softmax-bridge-quiz:\n  most-probability: B\n  largest-weight: !!int x\n")
    (learners / "dan.yaml").write_text("softmax-bridge-quiz:\n  most-probability: B\n")
    out = tmp_path / "out"
    done = _cli("batch", str(learners), "--assignment", "softmax-bridge", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = {
        name: json.loads((out / "results" / f"{name}.json").read_text()) for name in ("ann", "bob", "cid", "dan")
    }
    quiz = {
        name: next(e for e in result["exercises"] if e["id"] == "softmax-bridge-quiz")
        for name, result in results.items()
    }
    assert quiz["dan"]["score"] == 1 and quiz["ann"]["score"] == quiz["bob"]["score"] == quiz["cid"]["score"] == 0
    assert quiz["cid"]["status"] == "error" and "cid.yaml: 'x' is not an integer (line 3)" in quiz["cid"]["reason"]
    again = _cli("batch", str(learners), "--assignment", "softmax-bridge", "--out", str(out))
    assert again.returncode == 0 and "0 graded now, 4 unchanged" in again.stdout, again.stdout
