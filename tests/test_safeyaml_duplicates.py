"""A key written twice in one YAML mapping is refused at its second line, in specs and answers files alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.safeyaml import YamlProblem, load_yaml
from grader.submission.answers import AnswersProblem, load_answers


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("a: 1\nb: 2\na: 3\n", 3, "a"),
        ("{x: 1, x: 2}\n", 1, "x"),
        ("q:\n  - {id: 1}\n  - id: 2\n    id: 3\n", 4, "id"),
        ("outer:\n  inner: 1\n  inner: 1\n", 3, "inner"),
    ],
    ids=["block", "flow", "in-a-list", "same-value"],
)
def test_load_yaml_refuses_a_duplicate_key_at_its_second_line(text: str, line: int, key: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        load_yaml(text)
    assert caught.value.line == line
    assert f"the key {key!r} is written twice" in caught.value.message


def test_load_yaml_keeps_keys_that_differ_in_type() -> None:
    data, _ = load_yaml('1: a\n"1": b\n')
    assert data == {1: "a", "1": "b"}


def test_answers_file_with_a_duplicate_key_is_a_problem_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("why-softmax-quiz:\n  divide-by-sum-fails: A\n  divide-by-sum-fails: B\n")
    twice = r"answers.yaml: the key 'divide-by-sum-fails' is written twice .*\(line 3\)"
    with pytest.raises(AnswersProblem, match=twice):
        load_answers(path)
