"""The engine, driven through the in-process fake runner: fast, no processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.checks.engine import SourceModule, grade_implementation
from tests.fakes import InProcessFactory, InProcessProcess

ROOT = Path(__file__).resolve().parents[1]
OVERFLOWS = b"import numpy as np\ndef softmax(z, axis=-1):\n    e = np.exp(z)\n    return e / e.sum(axis=axis, keepdims=True)\n"
CORRECT = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_bytes()


@pytest.fixture()
def exercise(catalog):
    return catalog.exercise("stable-softmax")


def _grade(exercise, source: bytes, **options):
    factory = InProcessFactory()
    result = grade_implementation(exercise, SourceModule({"mine.py": source}, "mine.py"), factory, **options)
    return result, factory


def _check(result, check_id):
    return next(c for c in result.checks if c.id == check_id)


def _count_judging(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The id of the check, each time a case is judged (``engine._judge``) from now on."""
    from grader.checks import engine

    judged: list[str] = []
    original = engine._judge

    def counting(check, entry, case, outcomes):  # type: ignore[no-untyped-def]
        judged.append(check.id)
        return original(check, entry, case, outcomes)

    monkeypatch.setattr(engine, "_judge", counting)
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
    _, factory = _grade(exercise, CORRECT)
    planned = 0
    from grader.checks.engine import _Cases

    for check in exercise.checks:
        for case in _Cases.get(exercise, "softmax", check.cases):
            planned += len(check.plan(case, "softmax"))
    received = sum(process.calls_received for process in factory.opened)
    assert received < planned / 2


def test_grade_implementation_names_the_known_mistake(exercise) -> None:
    result, _ = _grade(exercise, OVERFLOWS, root=ROOT, diagnosis_cache={})
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
    hidden = exercise.model_copy(update={"checks": [
        c.model_copy(update={"reveal": "property"}) if c.id == "finite-for-large-inputs" else c for c in exercise.checks
    ]})
    check = _check(_grade(hidden, OVERFLOWS)[0], "finite-for-large-inputs")
    assert check.status == "failed" and check.input is None
    assert "1000" not in check.reason and "hidden input" in check.reason


def test_grade_implementation_missing_entry_is_missing(exercise) -> None:
    result, _ = _grade(exercise, b"def something_else():\n    return 1\n")
    assert result.status == "missing" and result.score == 0
    assert "does not define softmax()" in result.reason


def test_grade_implementation_exception_is_an_error_quoting_it(exercise) -> None:
    result, _ = _grade(exercise, b"def softmax(z, axis=-1):\n    return 1 / 0\n")
    check = _check(result, "matches-reference")
    assert check.status == "error"
    assert "ZeroDivisionError: division by zero" in check.reason


def test_the_same_output_is_judged_once_and_alike(exercise, monkeypatch, cache_dir) -> None:
    """A second submission that returns the very same bytes is not judged again, and gets the same result."""
    from grader.checks import engine

    judged = _count_judging(monkeypatch)
    monkeypatch.setattr(engine, "_PLANS", {})  # nothing remembered from earlier tests
    first, _ = _grade(exercise, OVERFLOWS)
    once = len(judged)
    again, _ = _grade(exercise, OVERFLOWS.replace(b"e = np.exp(z)", b"e = np.exp(z)  # same maths"))
    assert once > 50 and len(judged) == once
    assert again == first
    different, _ = _grade(exercise, CORRECT)  # other bytes: judged afresh, and nothing of the first leaks in
    assert len(judged) > once and different.score == different.max_score


def test_only_the_failing_input_a_reason_shows_has_its_values_written_out(exercise, monkeypatch, cache_dir) -> None:
    """A check fails on many inputs and its reason shows the first: the others are counted, not printed."""
    import contextlib

    import numpy as np

    from grader.checks import engine

    printed: list[int] = []
    original = np.array2string

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        printed.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(np, "array2string", counting)
    monkeypatch.setattr(engine, "_PLANS", {})
    counted, _ = _grade(exercise, OVERFLOWS)
    quietly = len(printed)
    monkeypatch.setattr(engine, "values_not_shown", contextlib.nullcontext)  # every failure written out
    monkeypatch.setattr(engine, "_PLANS", {})
    printed.clear()
    written, _ = _grade(exercise, OVERFLOWS)
    assert counted == written  # the same reasons, the same counts of further failing inputs
    assert any(check.more_failures > 2 for check in counted.checks)
    assert quietly < len(printed) / 2


def test_outputs_that_held_are_kept_for_the_next_run(exercise, monkeypatch, cache_dir) -> None:
    """A later run (a new process: no plans in memory) does not judge outputs on which every case held before."""
    from grader.checks import engine

    monkeypatch.setattr(engine, "_PLANS", {})
    first, _ = _grade(exercise, CORRECT)
    assert first.score == first.max_score and list(cache_dir.glob("held-*.pickle"))
    judged = _count_judging(monkeypatch)
    monkeypatch.setattr(engine, "_PLANS", {})  # the next run
    again, _ = _grade(exercise, CORRECT + b"\n# handed in by someone else\n")
    assert judged == [] and again == first
    monkeypatch.setattr(engine, "_PLANS", {})
    wrong, _ = _grade(exercise, OVERFLOWS)  # other outputs: judged, and found wanting
    assert judged and wrong.score < wrong.max_score
    monkeypatch.setenv("GRADER_NO_CACHE", "1")  # nothing kept is used with the cache off
    monkeypatch.setattr(engine, "_PLANS", {})
    judged.clear()
    off, _ = _grade(exercise, CORRECT)
    assert judged and off == first


def test_a_check_that_held_on_the_same_outputs_is_not_judged_case_by_case(exercise, monkeypatch, cache_dir) -> None:
    """Outputs on which every case of a check held before pass again at once, with the same result."""
    from grader.checks import engine

    monkeypatch.setattr(engine, "_PLANS", {})
    first, _ = _grade(exercise, CORRECT)
    assert first.score == first.max_score
    looked: list[str] = []
    original = engine._Findings.judge

    def counting(self, run, index, outcomes, **how):  # type: ignore[no-untyped-def]
        looked.append(run.check.id)
        return original(self, run, index, outcomes, **how)

    monkeypatch.setattr(engine._Findings, "judge", counting)
    again, _ = _grade(exercise, CORRECT + b"\n# the same maths, handed in by someone else\n")
    assert looked == [] and again == first
    wrong, _ = _grade(exercise, OVERFLOWS)  # other outputs: judged case by case, and found wanting
    assert looked and wrong.score < wrong.max_score


class _MeteredProcess:
    """The in-process runner, each answer read through the grader's parser against the process's byte budget."""

    def __init__(self, files: dict[str, bytes], module: str, entries: list[str]) -> None:
        from grader.sandbox.replies import ReplyBudget

        self._inner = InProcessProcess(files, module, entries)
        self.output = self._inner.output
        self.replies = ReplyBudget()
        self.alive = True
        self.answered: list = []  # type: ignore[type-arg]

    def start(self, then=None):  # type: ignore[no-untyped-def]
        return self._inner.start()

    def call_many(self, calls, blobs, deadline=None, *, batch=False):  # type: ignore[no-untyped-def]
        from grader.sandbox import child
        from grader.sandbox.frames import LimitExceeded, MessageParser
        from grader.sandbox.outcomes import CallOutcome
        from grader.sandbox.runner import LearnerProcess, _refused

        outcomes = []
        for index, call in enumerate(calls):
            header, payload = child._run_call(self._inner.module, index, call,
                                              lambda call=call: child._decode_arguments(call, blobs), "/nonexistent")
            try:
                MessageParser(allowance=self.replies).feed(child._answer(header, payload))
            except LimitExceeded as exc:
                self.alive = False
                outcomes.append(_refused(exc))
                break
            outcomes.append(LearnerProcess._decode_result(None, index, header, payload))  # type: ignore[arg-type]
        self.answered += outcomes
        return outcomes + [CallOutcome(status="not_run")] * (len(calls) - len(outcomes))

    def close(self) -> None:
        self.alive = False


class _MeteredFactory(InProcessFactory):
    def open(self, files, module, entries, call_seconds):  # type: ignore[no-untyped-def]
        process = _MeteredProcess(files, module, entries)
        self.opened.append(process)  # type: ignore[arg-type]
        return process


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
    assert large and all(outcome._arrays is None for outcome in large)  # judged, then let go


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
