"""Result models: what grading found, as data. No rendering happens here.

The JSON result of the contract is ``Report.model_dump(mode="json")``;
fields may be added over time, never removed or renamed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CheckResult", "ExerciseResult", "Report", "SandboxInfo"]

CheckStatus = Literal["passed", "failed", "error", "timeout", "skipped"]
ExerciseStatus = Literal["passed", "failed", "error", "missing"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckResult(_Model):
    """One check (or quiz question): its status, points and the reason a learner reads."""

    id: str
    status: CheckStatus
    score: float
    max_score: float
    visibility: str
    reason: str = Field(min_length=1)
    property: str | None = None
    input: str | None = Field(default=None, description="the smallest failing input, as a call")
    expected: str | None = None
    got: str | None = None
    hint: str | None = None
    note: str | None = Field(default=None, description="what the failing input shows, beyond got and expected")
    diagnosis: str | None = Field(default=None, description="the known mistake the learner's output matches")
    more_failures: int = 0


class ExerciseResult(_Model):
    id: str
    title: str = ""
    kind: str = ""
    status: ExerciseStatus
    score: float
    max_score: float
    reason: str = Field(min_length=1)
    checks: list[CheckResult] = Field(default_factory=list)
    output: str | None = Field(default=None, description="an escaped excerpt of what the learner's code printed")
    hidden_not_run: int = Field(default=0, description="hidden checks that will run at grading but did not run now")


class SandboxInfo(_Model):
    """Which sandbox layers held on this machine, proved by the start-up self-test."""

    tier: str = Field(description="A: reads, writes, processes, network and signals confined; "
                                  "B: all but file reads; C: less")
    landlock_abi: int = 0
    seccomp: bool = False
    caps_dropped: bool = False
    warning: str | None = None
    self_test: dict[str, str] | None = Field(
        default=None, description="each self-test probe (read, write, connect, fork, signal...): denied or allowed")
    unprotected: list[str] | None = Field(default=None, description="what this tier does not protect")


class Report(_Model):
    grader_version: str
    submission: str
    score: float
    max_score: float
    exercises: list[ExerciseResult] = Field(default_factory=list)
    public_only: bool = False
    hidden_not_run: int = 0
    problems: list[str] = Field(default_factory=list, description="notes about the submission as a whole")
    sandbox: SandboxInfo | None = None

    @property
    def all_passed(self) -> bool:
        return bool(self.exercises) and all(
            check.status == "passed" for exercise in self.exercises for check in exercise.checks
        ) and all(exercise.status == "passed" for exercise in self.exercises)
