"""What each check's calls printed: an exercise's output, cut by call, handed to the checks that name the calls."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from grader.engine.plan import build_plan
from grader.engine.printed import CallOutput
from grader.sandbox.output import OutputCapture


@dataclass
class Cut:
    """A ``CapturedOutput`` already cut by call."""

    imported: str | None
    calls: dict[int, str] = field(default_factory=dict)

    def excerpt(self) -> str:
        return (self.imported or "") + "".join(self.calls.values())

    def import_excerpt(self) -> str | None:
        return self.imported

    def call_excerpts(self) -> dict[int, str]:
        return self.calls


@pytest.fixture()
def plan(catalog):
    exercise = catalog.exercise("stable-softmax")
    return build_plan(exercise, list(exercise.checks))


def _keys(planned) -> list[int]:  # type: ignore[no-untyped-def]
    return [key for keys in planned.keys for key in keys]


def test_a_call_goes_to_the_first_check_that_names_it_and_only_there(plan) -> None:
    first, later = next(
        (a, b) for i, a in enumerate(plan.checks) for b in plan.checks[i + 1 :] if set(_keys(a)) & set(_keys(b))
    )
    shared = next(key for key in _keys(later) if key in _keys(first))
    own = next(key for key in _keys(later) if all(key not in _keys(p) for p in plan.checks if p is not later))
    output = CallOutput()
    output.sent([shared, own])
    output.collect(Cut("imported\n", {0: "shared\n", 1: "own\n"}))
    printed = output.by_check(plan)
    assert printed is not None and printed.imported == "imported\n"
    assert printed.checks[first.check.id] == "shared\n"
    assert printed.checks[later.check.id] == "own\n"
    assert len(printed.checks) == 2  # checks whose calls printed nothing have nothing


def test_a_process_started_again_adds_its_calls_output_but_not_its_import(plan) -> None:
    keys = _keys(plan.checks[0])
    output = CallOutput()
    output.sent(keys[:2])
    output.collect(Cut("imported\n", {1: "hung\n"}))
    output.sent([keys[2]])
    output.collect(Cut("imported\n", {0: "after\n"}))
    output.collect(Cut(None))  # one that never got through its import: nothing to cut
    printed = output.by_check(plan)
    assert printed is not None and printed.imported == "imported\n"
    assert printed.checks == {plan.checks[0].check.id: "hung\nafter\n"}  # in the order it was printed


def test_output_never_cut_by_call_is_not_given_to_checks(plan) -> None:
    output = CallOutput()
    output.sent(_keys(plan.checks[0]))
    capture = OutputCapture(100, 1000)  # as the in-process fake's: no counts came with its answers
    capture.add(b"printed\n")
    output.collect(capture)
    assert output.by_check(plan) is None
