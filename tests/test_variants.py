"""A learner's variant: drawn from the course secret and the learner's id, the same everywhere, hard to guess."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.engine.variants import (
    SECRET_ENV,
    SECRET_FILE_ENV,
    draw_variant,
    read_secret,
    secret_fingerprint,
    shown_value,
)
from grader.errors import SpecError, UsageError
from grader.spec.loader import load_spec_file
from grader.spec.params import ParamSpec, fill_text, placeholders

SECRET = b"a course secret of enough bytes"
PARAMS = {
    "a": ParamSpec(uniform=[1.0, 5.0], round=2),
    "n": ParamSpec(integers=[3, 9]),
    "unit": ParamSpec(choice=["cm", "m", 2.5]),
}


def test_draw_variant_gives_the_same_learner_the_same_values() -> None:
    first = draw_variant("q", PARAMS, "ada", SECRET)
    assert draw_variant("q", PARAMS, "ada", SECRET) == first


def test_draw_variant_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = (
        "import json; from grader.engine.variants import draw_variant; from grader.spec.params import ParamSpec; "
        "p = {'a': ParamSpec(uniform=[1.0, 5.0], round=2), 'n': ParamSpec(integers=[3, 9]), "
        "'unit': ParamSpec(choice=['cm', 'm', 2.5])}; "
        "print(json.dumps([draw_variant('q', p, f'learner-{i}', b'a course secret of enough bytes').values "
        "for i in range(20)]))"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        outputs.append(json.loads(done.stdout))
    here = [draw_variant("q", PARAMS, f"learner-{i}", SECRET).values for i in range(20)]
    assert outputs[0] == outputs[1] == here


def test_draw_variant_follows_the_documented_keyed_seed() -> None:
    """HMAC-SHA256(secret, "grader-variant" NUL exercise NUL learner NUL param): its first 16 bytes seed PCG64."""
    digest = hmac.new(SECRET, b"grader-variant\0q\0ada\0n", hashlib.sha256).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:16], "big"))
    assert draw_variant("q", PARAMS, "ada", SECRET).values["n"] == int(rng.integers(3, 9, endpoint=True))


def test_draw_variant_differs_between_learners_and_between_secrets() -> None:
    drawn = {draw_variant("q", PARAMS, f"learner-{i}", SECRET).values["a"] for i in range(30)}
    assert len(drawn) > 10
    other = b"another course secret, as long"
    differs = [
        draw_variant("q", PARAMS, f"learner-{i}", SECRET).values["a"]
        != draw_variant("q", PARAMS, f"learner-{i}", other).values["a"]
        for i in range(30)
    ]
    assert sum(differs) > 20


def test_draw_variant_keeps_each_value_within_its_declared_range() -> None:
    values = [draw_variant("q", PARAMS, f"learner-{i}", SECRET).values for i in range(300)]
    assert all(1.0 <= v["a"] <= 5.0 and round(v["a"], 2) == v["a"] for v in values)
    assert {v["n"] for v in values} == set(range(3, 10))  # both ends included
    assert {v["unit"] for v in values} == {"cm", "m", 2.5}


def test_draw_variant_keeps_a_param_when_another_is_added() -> None:
    fewer = draw_variant("q", {"n": PARAMS["n"]}, "ada", SECRET)
    more = draw_variant("q", {"a": PARAMS["a"], "n": PARAMS["n"]}, "ada", SECRET)
    assert fewer.values["n"] == more.values["n"]


def test_variant_shows_a_float_as_the_exact_value_graded() -> None:
    assert float(shown_value(0.1 + 0.2)) == 0.1 + 0.2
    assert shown_value(4) == "4" and shown_value("cm") == "cm"


def test_read_secret_from_the_environment_or_a_file(tmp_path: Path) -> None:
    assert read_secret({}) is None
    assert read_secret({SECRET_ENV: "  sixteen-or-more-bytes \n"}) == b"sixteen-or-more-bytes"
    path = tmp_path / "secret"
    path.write_bytes(b"0123456789abcdef0123\n")
    assert read_secret({SECRET_FILE_ENV: str(path)}) == b"0123456789abcdef0123"


@pytest.mark.parametrize(
    ("environ", "words"),
    [
        ({SECRET_ENV: "short"}, "at least 16"),
        ({SECRET_FILE_ENV: "/nonexistent/secret"}, "cannot read the variant secret"),
    ],
    ids=["too-short", "unreadable-file"],
)
def test_read_secret_refuses_a_weak_or_missing_secret_in_one_line(environ: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_secret(environ)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_secret_fingerprint_tells_secrets_apart_without_holding_them() -> None:
    one, two = secret_fingerprint(SECRET), secret_fingerprint(b"another course secret, as long")
    assert one != two and SECRET.hex() not in one and secret_fingerprint(SECRET) == one


def test_fill_text_replaces_placeholders_and_keeps_escaped_braces() -> None:
    text = "{{a}} is {a}; {unknown} and {1, 2} stay"
    assert list(placeholders(text)) == ["a", "unknown"]
    assert fill_text(text, {"a": "2.5"}) == "{a} is 2.5; {unknown} and {1, 2} stay"


QUIZ = """id: v-quiz
kind: quiz
title: V
params:
  n: {integers: [1, 3]}
questions:
  - id: q
    type: numeric
    prompt: "{PROMPT}"
    answer: ANSWER
    tolerance: 0.01
    reason_correct: ok
    reason_wrong: try again
"""


@pytest.mark.parametrize(
    ("prompt", "answer", "line", "words"),
    [
        ("What is {m}?", '"n"', 9, "{m} names no param"),
        ("What is {n}?", '"m * 2"', 10, "reads 'm', which is not a param"),
        ("What is {n}?", '"n +"', 10, "must be a valid number, or in a quiz with params: an expression"),
        ("What is {n}?", '"reference.f(n)"', 10, "numpy functions only"),
    ],
    ids=["unknown-placeholder", "unknown-name", "not-an-expression", "reference-call"],
)
def test_a_quiz_template_that_cannot_mean_anything_is_refused_at_its_line(
    tmp_path: Path, prompt: str, answer: str, line: int, words: str
) -> None:
    path = tmp_path / "v-quiz.yaml"
    path.write_text(QUIZ.replace("{PROMPT}", prompt).replace("ANSWER", answer), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    assert caught.value.line == line and words in caught.value.message


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ("n: {integers: [1, 3], choice: [1]}", "exactly one of"),
        ("n: {integers: [1, 3], round: 2}", "'round' goes with 'uniform' only"),
        ("n: {uniform: [3, 1]}", "finite low < high"),
        ("exp: {integers: [1, 3]}", "not a numpy function"),
    ],
    ids=["two-ways", "round-on-integers", "empty-range", "reserved-name"],
)
def test_a_param_drawn_no_single_way_is_refused(tmp_path: Path, params: str, words: str) -> None:
    path = tmp_path / "v-quiz.yaml"
    text = QUIZ.replace("  n: {integers: [1, 3]}", f"  {params}").replace("{PROMPT}", "Q").replace("ANSWER", "1")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    assert words in caught.value.message


def test_an_answer_expression_needs_params_to_compute_from(tmp_path: Path) -> None:
    path = tmp_path / "v-quiz.yaml"
    text = QUIZ.replace("params:\n  n: {integers: [1, 3]}\n", "").replace("{PROMPT}", "Q").replace("ANSWER", '"a * 2"')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError, match="unless the quiz declares params"):
        load_spec_file(path)
