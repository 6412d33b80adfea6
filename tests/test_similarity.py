"""``grader.batch.similarity``: disguised copies and shared wrong outputs found, honest look-alikes ranked below.

The class is planted (``similarity_class``): two disguised copies, a pair
sharing only rare wrong outputs, six learners who wrote the same short
softmax, three more with solutions of their own, and the handout's stubs
in every file.
"""

from __future__ import annotations

import random
from itertools import combinations
from types import SimpleNamespace

import pytest
from similarity_class import COPIED, HONEST, SAME_WRONG_OUTPUTS, STUB, planted_code, planted_outputs

from grader.batch.code_tokens import MAX_TOKENS, normalise_files, normalise_source
from grader.batch.similarity import (
    WrongOutput,
    find_similar,
    gram_hashes,
    rare_limit,
    winnow,
    wrong_outputs,
)
from grader.results import CheckResult, ExerciseResult, Report


def _texts(source: str) -> list[str]:
    return [token.text for token in normalise_source(source)]


def _ranked(**options) -> list[tuple[str, str]]:
    found = find_similar(planted_code(), boilerplate=[STUB], outputs=planted_outputs(), **options)
    return [(pair.first, pair.second) for pair in found.pairs]


def test_normalise_sets_aside_names_comments_docstrings_layout_and_function_order() -> None:
    code = planted_code()
    assert _texts(code["ana"]["solution.py"]) == _texts(code["ben"]["solution.py"])
    assert _texts(code["cleo"]["solution.py"]) == _texts(code["dan"]["solution.py"])
    assert _texts(code["ana"]["solution.py"]) != _texts(code["cleo"]["solution.py"])


def test_normalise_keeps_what_a_learner_cannot_rename() -> None:
    texts = _texts("import numpy as np\nw = np.exp(z).sum(axis=0, keepdims=True) + len(z)\n")
    # two units, in their sorted order ("V" before "import")
    assert texts == "V = V . exp ( V ) . sum ( axis = N , keepdims = True ) + len ( V ) import numpy as V".split()


def test_normalise_orders_units_the_same_across_files() -> None:
    one = {"a.py": "def f(x):\n    return x + 1\n", "b.py": "def g(y):\n    return [y] * 2\n"}
    other = {"main.py": "def h(q):\n    return [q] * 2\n\n\ndef k(r):\n    return r + 1\n"}
    assert [t.text for t in normalise_files(one)] == [t.text for t in normalise_files(other)]


@pytest.mark.parametrize(
    "source",
    [
        "def f(:\n  x = 'unterminated",
        "def f():\n\treturn 1\n        return 2\n",
        "(" * 5000,
        "\x00\x01 binary \xff",
        'x = f"{1 + 2} and {y!r}"\n',
        "",
    ],
    ids=["unterminated", "bad-indent", "deep-nesting", "binary", "f-string", "empty"],
)
def test_normalise_never_raises_on_a_learner_file(source: str) -> None:
    tokens = normalise_source(source)
    assert all(token.line >= 1 for token in tokens)


def test_normalise_never_parses_a_learner_file(parsed_by_ast: list[object]) -> None:
    source = "def f(x):\n    return x\n\n\ny = f" + "(1)" * (1 << 18) + "\n"
    units = {token.unit for token in normalise_source(source)}
    assert not parsed_by_ast, "learner code was parsed in the batch's process"
    assert len(units) == 2, "its two top-level statements are still told apart"


def test_normalise_reads_a_padded_file_only_up_to_its_budget() -> None:
    tokens = normalise_files({"a.py": "x = " + "-" * 200_000 + "1\n", "b.py": "y = 2\n"})
    assert len(tokens) <= MAX_TOKENS + 1


def test_winnow_keeps_a_fingerprint_in_every_window() -> None:
    hashes = gram_hashes(normalise_source(planted_code()["ana"]["solution.py"]))
    chosen = winnow(hashes)
    for start in range(len(hashes) - 3):
        assert set(hashes[start : start + 4]) & set(chosen)
    assert all(hashes[position] == value for value, position in chosen.items())


def test_every_planted_pair_is_found_and_no_honest_pair_ranks_above_them() -> None:
    ranked = _ranked()
    planted = [*sorted(COPIED), SAME_WRONG_OUTPUTS]
    assert all(pair in ranked for pair in planted), ranked
    worst_planted = max(ranked.index(pair) for pair in planted)
    honest = [pair for pair in ranked if pair not in planted]
    assert all(ranked.index(pair) > worst_planted for pair in honest), ranked[: worst_planted + 3]


def test_disguised_copies_rank_above_short_solutions_written_the_same_way() -> None:
    found = find_similar(planted_code(), boilerplate=[STUB], outputs=planted_outputs())
    score = {(pair.first, pair.second): pair for pair in found.pairs}
    copies = min(score[pair].code_score for pair in COPIED)
    look_alikes = [score[pair].code_score for pair in combinations(HONEST, 2) if pair in score]
    assert look_alikes, "the honest learners share their short softmax: they are scored, and low"
    assert max(look_alikes) < copies / 2


def test_the_pair_sharing_only_wrong_outputs_is_found_by_them() -> None:
    found = find_similar(planted_code(), boilerplate=[STUB], outputs=planted_outputs())
    pair = next(pair for pair in found.pairs if (pair.first, pair.second) == SAME_WRONG_OUTPUTS)
    assert pair.code_score < pair.output_score
    assert {shared.output.check for shared in pair.outputs} == {"rows-sum-to-one"}
    assert all(shared.holders == 2 for shared in pair.outputs)
    without = find_similar(planted_code(), boilerplate=[STUB])
    assert SAME_WRONG_OUTPUTS not in [(pair.first, pair.second) for pair in without.pairs]


def test_a_wrong_output_many_learners_give_makes_no_pair() -> None:
    common = WrongOutput("e", "c", "f(1)", "nan")
    code = {f"l{n:02d}": {"a.py": f"x{n} = {n}\n"} for n in range(30)}
    assert rare_limit(30) < 30
    found = find_similar(code, outputs={name: {common} for name in code})
    assert found.pairs == []


def test_the_handout_code_does_not_count() -> None:
    scaffold = STUB + "\n\ndef helper(rows):\n    return [sum(row) / len(row) for row in rows if row]\n"
    code = {name: {"s.py": scaffold} for name in ("a", "b")} | {"c": {"s.py": "print(1)\n"}}
    assert find_similar(code).pairs, "without the boilerplate, the two untouched handouts look alike"
    assert find_similar(code, boilerplate=[scaffold]).pairs == []


def test_the_ranking_is_the_same_whatever_the_order_of_the_class() -> None:
    code, outputs = planted_code(), planted_outputs()
    names = list(code)
    random.Random(7).shuffle(names)
    shuffled = {name: code[name] for name in names}
    first = find_similar(code, boilerplate=[STUB], outputs=outputs)
    again = find_similar(shuffled, boilerplate=[STUB], outputs=outputs)
    assert first == again


def _covered(blocks) -> set[int]:
    return {line for _, low, high in blocks for line in range(low, high + 1)}


def test_passages_cover_the_copied_code_on_both_sides_in_each_learners_own_lines() -> None:
    found = find_similar(planted_code(), boilerplate=[STUB], outputs=planted_outputs())
    pair = next(pair for pair in found.pairs if (pair.first, pair.second) == ("ana", "ben"))
    code = planted_code()
    for name, side in (("ana", "first"), ("ben", "second")):
        lines = code[name]["solution.py"].splitlines()
        covered = set().union(*(_covered(getattr(passage, side)) for passage in pair.passages))
        code_lines = {
            number
            for number, line in enumerate(lines, start=1)
            if line.strip() and not line.strip().startswith(("#", '"""', "import"))
        }
        assert code_lines <= covered, [lines[n - 1] for n in sorted(code_lines - covered)]
    assert pair.first_share > 0.8 and pair.second_share > 0.8


def _failed(check: str, visibility: str, got: str | None) -> CheckResult:
    return CheckResult(
        id=check,
        status="failed",
        score=0.0,
        max_score=1.0,
        visibility=visibility,
        reason="Failed.",
        input="f(x=1)",
        got=got,
    )


def test_wrong_outputs_reads_failed_hidden_checks_with_input_and_value() -> None:
    checks = [
        _failed("hidden-one", "hidden", "2.0"),
        _failed("public-one", "public", "3.0"),
        _failed("no-value", "hidden", None),
    ]
    exercise = ExerciseResult(id="ex", status="failed", score=0.0, max_score=3.0, reason="R.", checks=checks)
    report = Report(grader_version="0", submission="s", score=0.0, max_score=3.0, exercises=[exercise])
    assert wrong_outputs(report) == {WrongOutput("ex", "hidden-one", "f(x=1)", "2.0")}


def test_wrong_outputs_prefers_the_failing_record_the_batch_keeps() -> None:
    kept = SimpleNamespace(input="f(x=2)", got="7.0")
    check = SimpleNamespace(id="c", status="failed", visibility="hidden", input=None, got=None, failing=kept)
    report = SimpleNamespace(exercises=[SimpleNamespace(id="ex", checks=[check])])
    assert wrong_outputs(report) == {WrongOutput("ex", "c", "f(x=2)", "7.0")}  # type: ignore[arg-type]


_PAGE_DIGEST = """
import hashlib
from similarity_class import STUB, planted_code, planted_outputs
from grader.batch.similarity import find_similar
from grader.batch.similarity_html import format_similarity_html
code = planted_code()
found = find_similar(code, boilerplate=[STUB], outputs=planted_outputs())
print(hashlib.sha256(format_similarity_html(found, code, title="T").encode()).hexdigest())
"""


@pytest.mark.slow
def test_the_page_is_byte_identical_whatever_the_process_hash_seed() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).parent

    def digest(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(here)}
        done = subprocess.run([sys.executable, "-c", _PAGE_DIGEST], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert digest("1") == digest("2")
