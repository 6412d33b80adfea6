"""The engine, driven through the in-process fake runner: fast, no processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
OVERFLOWS = (
    b"import numpy as np\ndef softmax(z, axis=-1):\n    e = np.exp(z)\n    return e / e.sum(axis=axis, keepdims=True)\n"
)
CORRECT = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_bytes()


@pytest.fixture()
def exercise(catalog):
    return catalog.exercise("stable-softmax")


def _grade(exercise, source: bytes, memo: GradingMemo | None = None, **options):
    factory = InProcessFactory()
    result = grade_implementation(
        exercise,
        SourceModule({"mine.py": source}, "mine.py"),
        factory,
        memo=memo if memo is not None else GradingMemo(),
        **{"references": ROOT, **options},
    )
    return result, factory


def _check(result, check_id):
    return next(c for c in result.checks if c.id == check_id)


def _count_judging(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The id of the check, each time a case is judged (``findings.judge_case``) from now on."""
    from grader.engine import findings

    judged: list[str] = []
    original = findings.judge_case

    def counting(check, entry, case, outcomes, calls=()):  # type: ignore[no-untyped-def]
        judged.append(check.id)
        return original(check, entry, case, outcomes, calls)

    monkeypatch.setattr(findings, "judge_case", counting)
    return judged


def test_grade_implementation_reports_the_simplest_failing_input(exercise) -> None:
    result, _ = _grade(exercise, OVERFLOWS)
    finite = _check(result, "finite-for-large-inputs")
    assert finite.status == "failed"
    assert finite.input == "softmax(z=array([1000., 1001.]))"
    assert finite.got == "array([nan, nan])"
    assert finite.more_failures > 0


def test_grade_implementation_pass_reason_says_what_was_verified(exercise) -> None:
    result, _ = _grade(exercise, CORRECT)
    assert result.status == "passed" and result.score == result.max_score
    assert "verified on" in _check(result, "finite-for-large-inputs").reason
    assert "magnitude" in _check(result, "finite-for-large-inputs").reason


def test_grade_implementation_sends_each_distinct_call_once(exercise) -> None:
    memo = GradingMemo()
    _, factory = _grade(exercise, CORRECT, memo)
    planned = 0
    for check in exercise.checks:
        args = dict(exercise.entries["softmax"].args)
        for case in [case for name in check.cases for case in memo.cases(exercise, name, args)]:
            planned += len(check.plan(case, "softmax"))
    received = sum(process.calls_received for process in factory.opened)
    assert received < planned / 2


def test_grade_implementation_names_the_known_mistake(exercise) -> None:
    result, _ = _grade(exercise, OVERFLOWS, root=ROOT)
    finite = _check(result, "finite-for-large-inputs")
    assert finite.diagnosis is not None and "without subtracting the maximum" in finite.diagnosis
    assert "known mistake" in finite.reason


def test_grade_implementation_public_only_counts_hidden_checks(exercise) -> None:
    result, _ = _grade(exercise, CORRECT, public_only=True)
    public = [c for c in exercise.checks if c.visibility == "public"]
    assert len(result.checks) == len(public)
    assert result.hidden_not_run == len(exercise.checks) - len(public)
    assert f"{result.hidden_not_run} hidden checks will run" in result.reason


def test_grade_implementation_hidden_reveal_property_hides_the_input(exercise) -> None:
    hidden = exercise.model_copy(
        update={
            "checks": [
                c.model_copy(update={"reveal": "property"}) if c.id == "finite-for-large-inputs" else c
                for c in exercise.checks
            ]
        }
    )
    check = _check(_grade(hidden, OVERFLOWS)[0], "finite-for-large-inputs")
    assert check.status == "failed" and check.input is None
    assert "1000" not in check.reason and "hidden input" in check.reason


def test_grade_implementation_missing_entry_is_missing(exercise) -> None:
    result, _ = _grade(exercise, b"def something_else():\n    return 1\n")
    assert result.status == "missing" and result.score == 0
    assert "does not define softmax()" in result.reason


def test_grade_implementation_exception_is_an_error_quoting_it_once(exercise) -> None:
    """The first check it stops quotes the exception with its input; every other says so in one line, naming it."""
    result, _ = _grade(exercise, b"def softmax(z, axis=-1):\n    return 1 / 0\n")
    errors = [check for check in result.checks if check.status == "error"]
    first, rest = errors[0], errors[1:]
    assert "ZeroDivisionError: division by zero" in first.reason and first.input is not None
    assert rest and all("division by zero" not in check.reason for check in rest)
    assert all(f"stopped by the same error (ZeroDivisionError) as {first.id}" in check.reason for check in rest)
    assert all(check.input is None and check.hint is None for check in rest)  # one line in every format


def test_the_same_output_is_judged_once_and_alike(exercise, monkeypatch, cache_dir) -> None:
    """A second submission that returns the very same bytes is not judged again, and gets the same result."""
    judged = _count_judging(monkeypatch)
    memo = GradingMemo()  # nothing remembered from earlier tests
    first, _ = _grade(exercise, OVERFLOWS, memo)
    once = len(judged)
    again, _ = _grade(exercise, OVERFLOWS.replace(b"e = np.exp(z)", b"e = np.exp(z)  # same maths"), memo)
    assert once > 50 and len(judged) == once
    assert again == first
    different, _ = _grade(exercise, CORRECT, memo)  # other bytes: judged afresh, and nothing of the first leaks in
    assert len(judged) > once and different.score == different.max_score


def test_only_the_failing_input_a_reason_shows_has_its_values_written_out(exercise, monkeypatch, cache_dir) -> None:
    """A check fails on many inputs and its reason shows the first: the others are counted, not printed."""
    import contextlib

    import numpy as np

    from grader.engine import findings

    printed: list[int] = []
    original = np.array2string

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        printed.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(np, "array2string", counting)
    counted, _ = _grade(exercise, OVERFLOWS, GradingMemo())
    quietly = len(printed)
    monkeypatch.setattr(findings, "values_not_shown", contextlib.nullcontext)  # every failure written out
    printed.clear()
    written, _ = _grade(exercise, OVERFLOWS, GradingMemo())
    assert counted == written  # the same reasons, the same counts of further failing inputs
    assert any(check.more_failures > 2 for check in counted.checks)
    print("COUNTS", quietly, len(printed))
    assert quietly < len(printed) / 2


def test_outputs_that_held_are_kept_for_the_next_run(exercise, monkeypatch, cache_dir) -> None:
    """A later run (a new process: no plans in memory) does not judge outputs on which every case held before."""
    first, _ = _grade(exercise, CORRECT, GradingMemo())
    assert first.score == first.max_score and list(cache_dir.glob("held-*.json"))
    judged = _count_judging(monkeypatch)
    again, _ = _grade(exercise, CORRECT + b"\n# handed in by someone else\n", GradingMemo())  # the next run
    assert judged == [] and again == first
    wrong, _ = _grade(exercise, OVERFLOWS, GradingMemo())  # other outputs: judged, and found wanting
    assert judged and wrong.score < wrong.max_score
    monkeypatch.setenv("GRADER_NO_CACHE", "1")  # nothing kept is used with the cache off
    judged.clear()
    off, _ = _grade(exercise, CORRECT, GradingMemo())
    assert judged and off == first


def test_a_check_that_held_on_the_same_outputs_is_not_judged_case_by_case(exercise, monkeypatch, cache_dir) -> None:
    """Outputs on which every case of a check held before pass again at once, with the same result."""
    from grader.engine.findings import Findings

    memo = GradingMemo()
    first, _ = _grade(exercise, CORRECT, memo)
    assert first.score == first.max_score
    looked: list[str] = []
    original = Findings.judge

    def counting(self, run, index, outcomes, **how):  # type: ignore[no-untyped-def]
        looked.append(run.check.id)
        return original(self, run, index, outcomes, **how)

    monkeypatch.setattr(Findings, "judge", counting)
    again, _ = _grade(exercise, CORRECT + b"\n# the same maths, handed in by someone else\n", memo)
    assert looked == [] and again == first
    wrong, _ = _grade(exercise, OVERFLOWS, memo)  # other outputs: judged case by case, and found wanting
    assert looked and wrong.score < wrong.max_score


class _MeteredFactory(InProcessFactory):
    """In-process processes whose answers are read against their reply budget, as the real ones' are."""

    def __init__(self) -> None:
        super().__init__(metered=True)


AT_THE_LIMIT = b"import numpy as np\ndef softmax(z, axis=-1):\n    return np.ones(131072 - 64)\n"


def test_an_exercise_that_sent_all_it_may_is_not_asked_again(exercise) -> None:
    """Past the exercise's limit every call still needed gets the limit's reason, without another process."""
    factory = _MeteredFactory()
    result = grade_implementation(exercise, SourceModule({"mine.py": AT_THE_LIMIT}, "mine.py"), factory)
    assert len(factory.opened) == 1
    said = " ".join(check.got or "" for check in result.checks)
    assert "softmax returned more than 4 MiB in the answers of one exercise (limit 4 MiB)" in said
    assert "an array of shape (131008,)" in said and result.score == 0  # the answers within the limit are judged
    large = [outcome for outcome in factory.opened[0].answered if outcome.status == "ok"]  # type: ignore[attr-defined]
    assert large and not any(outcome.decoded for outcome in large)  # type: ignore[attr-defined]  # judged, then let go


def test_a_submission_that_sent_all_it_may_has_its_next_exercises_not_run(catalog) -> None:
    from grader.sandbox.replies import ReplyBudget

    replies = ReplyBudget(submission=6 << 20)
    factory = _MeteredFactory()
    source = SourceModule({"mine.py": AT_THE_LIMIT + b"log_softmax = softmax\n"}, "mine.py")
    first = grade_implementation(catalog.exercise("stable-softmax"), source, factory, replies=replies)
    second = grade_implementation(catalog.exercise("log-softmax"), source, factory, replies=replies)
    assert "4 MiB in the answers of one exercise" in " ".join(check.got or "" for check in first.checks)
    assert len(factory.opened) == 2  # the second exercise's process reached the submission's limit
    third = grade_implementation(catalog.exercise("log-softmax"), source, factory, replies=replies)
    assert len(factory.opened) == 2 and third.score == 0
    assert "16 MiB" not in third.reason and "returned more than 6 MiB in the answers of one submission" in third.reason
    assert second.score == 0
