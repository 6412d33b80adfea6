"""Result records: what grading found, as data. No rendering happens here.

They are plain dataclasses, not pydantic models, so that a cold ``grader
grade`` builds and prints a report without importing pydantic, as spec
records do (``docs/performance.md``, "Stand-ins, measured"). Unlike the
engine's records they stay dataclasses, not ``msgspec`` Structs, because that
reader is pydantic, which validates dataclasses and knows nothing of Structs.
:func:`report_to_json` writes the contract's JSON result; fields may be added
over time, never removed or renamed. :func:`report_from_json` reads one back
with full validation (pydantic, loaded then), for the batch command, which
trusts no file on disk.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

import msgspec

__all__ = [
    "Adjustment",
    "CheckResult",
    "ExerciseResult",
    "FAILING_TEXT",
    "FAILING_VALUES",
    "FailingOutput",
    "Report",
    "OUTCOMES",
    "PrintedOutput",
    "SandboxInfo",
    "exercise_outcome",
    "reached_checks",
    "report_from_json",
    "report_from_worker",
    "report_to_json",
    "to_data",
]

CheckStatus = Literal["passed", "failed", "error", "timeout", "skipped"]
ExerciseStatus = Literal["passed", "failed", "error", "missing"]
# What happened to an exercise, in the one word every format shows (see ``exercise_outcome``).
Outcome = Literal["passed", "failed", "missing", "syntax-error", "import-error", "timeout", "error"]
OUTCOMES: tuple[Outcome, ...] = Outcome.__args__  # type: ignore[attr-defined]

_CHECK_STATUSES = frozenset(CheckStatus.__args__)  # type: ignore[attr-defined]
_EXERCISE_STATUSES = frozenset(ExerciseStatus.__args__)  # type: ignore[attr-defined]
_FORBID_EXTRA = {"extra": "forbid"}  # read by pydantic when report_from_json validates a stored result


def _points_as_floats(record: Any) -> None:
    record.score, record.max_score = float(record.score), float(record.max_score)


def _require(record: Any, allowed: frozenset[str], what: str) -> None:
    """What the pydantic models checked: a known status, a reason, and points as floats."""
    _points_as_floats(record)
    status, reason = record.status, record.reason
    if status not in allowed:
        raise ValueError(f"{what} status {status!r} is not one of {sorted(allowed)}")
    if not reason:
        raise ValueError(f"a {what} result needs a reason; every result says why")


@dataclass(kw_only=True)
class FailingOutput:
    """For the instructor only: what a failed check's first failing case gave, kept when grading a class.

    ``grader batch`` asks for it (``GradingSession(keep_failing=True)``) so
    that learners who failed a check the same way can be grouped
    (``grader.batch.mistakes``), hidden checks included, and stores it apart
    from the result (``failing/STEM.json``); ``grader grade`` never keeps it,
    and no learner-facing format shows it. ``input`` is the
    call, ``got`` and ``expected`` the finding's words; ``values`` the
    learner's outputs on the case (a check may call an entry more than once)
    flattened, when they are at most ``FAILING_VALUES`` numbers (``"nan"``,
    ``"inf"``, ``"-inf"`` for values JSON cannot hold), with each one's
    ``shapes`` and the tolerance (``rtol``, ``atol``) two outputs are judged the
    same within; ``known`` the misconception of the known-wrong solution the
    engine matched the failure to (``engine.diagnosis``), whether or not the
    learner was told. Every text is bounded.
    """

    __pydantic_config__ = _FORBID_EXTRA

    input: str
    got: str
    expected: str
    values: list[float | str] | None = None
    shapes: list[list[int]] | None = None
    rtol: float = 0.0
    atol: float = 0.0
    known: str | None = None


FAILING_VALUES = 64
FAILING_TEXT = 400


@dataclass(kw_only=True)
class CheckResult:
    """One check (or quiz question): its status, points and the reason a learner reads.

    ``input`` is the smallest failing input, as a call; ``note`` what that input
    shows beyond ``got`` and ``expected``; ``diagnosis`` the known mistake the
    learner's output matches. ``picked``, for a quiz question the learner
    answered, the option letters the answer picks in letter order (empty when
    it names no option, and for a numeric question); left out when there was
    no answer. The class's item statistics count options from it. ``task``
    is the numbered task of the instructions the check tests, when its spec
    names one (Exercism links the test to it).
    """

    __pydantic_config__ = _FORBID_EXTRA

    id: str
    status: CheckStatus
    score: float
    max_score: float
    visibility: str
    reason: str
    property: str | None = None
    input: str | None = None
    expected: str | None = None
    got: str | None = None
    hint: str | None = None
    note: str | None = None
    diagnosis: str | None = None
    more_failures: int = 0
    picked: list[str] | None = None
    failing: FailingOutput | None = None
    task: int | None = None

    def __post_init__(self) -> None:
        _require(self, _CHECK_STATUSES, "check")


@dataclass(kw_only=True)
class Adjustment:
    """A change an instructor made to an exercise's score after grading (``grader batch``'s overrides file).

    ``score_before`` and ``score_after`` are the exercise's score; when the
    change was to one check (or quiz question), ``check`` names it and
    ``check_score_before`` and ``check_score_after`` are that check's score.
    The scores before are those grading gave, so the change can be undone
    exactly when the overrides file changes.
    """

    __pydantic_config__ = _FORBID_EXTRA

    check: str | None = None
    check_score_before: float | None = None
    check_score_after: float | None = None
    score_before: float
    score_after: float
    reason: str


@dataclass(kw_only=True)
class PrintedOutput:
    """What the learner's code printed, cut by when: while its file was imported, and while each check's calls ran.

    ``imported``: what the import printed (of the exercise's first process; a process started again
    after a crash imports the file again, and that output is not repeated); ``checks``: check id ->
    what its calls printed, for the checks whose calls printed something. A call several checks share
    gives its output to the first of them in the plan's order, so nothing is shown twice; output of
    calls whose answers were lost with their process is in neither (the calls are asked again).
    Each text is an escaped excerpt, bounded as ``ExerciseResult.output`` is.
    """

    __pydantic_config__ = _FORBID_EXTRA

    imported: str = ""
    checks: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class ExerciseResult:
    """One exercise. ``output`` is an escaped excerpt of what the learner's code printed;
    ``hidden_not_run`` counts hidden checks that will run at grading but did not run now;
    ``note`` says which file was graded when several files of the submission define an entry;
    ``adjustments`` the changes an instructor made to its score, in the order they were made;
    ``variant`` the values of the exercise's params this learner was graded on (``engine.variants``).
    ``printed``: ``output`` cut by import and check (``PrintedOutput``), when the engine could cut it;
    kept out of the JSON result (whose ``output`` holds all of it), so it is lost in a report read back.
    ``file`` and ``line``: where the graded entry is defined (``line`` unknown for a notebook), for
    annotations on the learner's own line.
    ``outcome`` is ``status`` told apart further (``exercise_outcome``): the word the gradebook, the
    summary and the feedback show; the report fills it in when it is built."""

    __pydantic_config__ = _FORBID_EXTRA

    id: str
    title: str = ""
    kind: str = ""
    status: ExerciseStatus
    outcome: Outcome | None = None
    score: float
    max_score: float
    reason: str
    checks: list[CheckResult] = field(default_factory=list)
    output: str | None = None
    hidden_not_run: int = 0
    note: str | None = None
    adjustments: list[Adjustment] | None = None
    file: str | None = None
    line: int | None = None
    variant: dict[str, int | float | str] | None = None
    printed: PrintedOutput | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _require(self, _EXERCISE_STATUSES, "exercise")
        if self.outcome is not None and self.outcome not in OUTCOMES:
            raise ValueError(f"exercise outcome {self.outcome!r} is not one of {list(OUTCOMES)}")

    @classmethod
    def unscored(cls, exercise: Any, status: ExerciseStatus, reason: str) -> ExerciseResult:
        """An exercise no check ran on (missing, or the grader failed): its id, title and points, scored 0."""
        return cls(
            id=exercise.id,
            title=exercise.title,
            kind=exercise.kind,
            status=status,
            score=0.0,
            max_score=exercise.max_score,
            reason=reason,
        )


@dataclass(kw_only=True)
class SandboxInfo:
    """Which sandbox layers held on this machine, proved by the start-up self-test.

    ``tier`` A: reads, writes, processes, network and signals confined; B: all
    but file reads; C: less. ``self_test`` says, for each probe (read, write,
    connect, fork, signal...), denied or allowed; ``unprotected`` lists what
    this tier does not protect.
    """

    __pydantic_config__ = _FORBID_EXTRA

    tier: str
    landlock_abi: int = 0
    seccomp: bool = False
    caps_dropped: bool = False
    warning: str | None = None
    self_test: dict[str, str] | None = None
    unprotected: list[str] | None = None


@dataclass(kw_only=True)
class Report:
    """A whole submission; ``problems`` are notes about the submission as a whole.

    ``unsandboxed``: set when the learner's code ran without the kernel
    sandbox (the fallback runner, public checks only): the sentence every
    format shows first. First here, so it comes first in the JSON too.

    ``handout``: set when the report was graded against a released
    handout's specs and reference answers (``public-checks/``), which
    whoever holds the handout can edit: the sentence saying it is a
    self-check, not a grade of record, shown at the top of every format.
    """

    __pydantic_config__ = _FORBID_EXTRA

    unsandboxed: str | None = None
    handout: str | None = None
    grader_version: str
    submission: str
    score: float
    max_score: float
    exercises: list[ExerciseResult] = field(default_factory=list)
    public_only: bool = False
    hidden_not_run: int = 0
    problems: list[str] = field(default_factory=list)
    sandbox: SandboxInfo | None = None

    def __post_init__(self) -> None:
        _points_as_floats(self)
        for exercise in self.exercises:
            if exercise.outcome is None:
                exercise.outcome = exercise_outcome(exercise)

    @property
    def all_passed(self) -> bool:
        return (
            bool(self.exercises)
            and all(check.status == "passed" for exercise in self.exercises for check in exercise.checks)
            and all(exercise.status == "passed" for exercise in self.exercises)
        )


_SYNTAX = re.compile(r"\b(?:SyntaxError|IndentationError|TabError)\b")


def reached_checks(exercise: ExerciseResult) -> bool:
    """Whether the learner's code got as far as the checks: one passed or failed, or one shows an input or a value."""
    return any(c.status in ("passed", "failed") or c.input is not None or c.got is not None for c in exercise.checks)


def exercise_outcome(exercise: ExerciseResult) -> Outcome:
    """What happened to ``exercise``, in one word: ``status``, with ``error`` told apart by what stopped the code.

    - ``passed``, ``failed``, ``missing``: the status itself.
    - ``error`` when no check got as far as running (``reached_checks`` is false): ``timeout`` when the
      import ran out of time, ``syntax-error`` when the reason names ``SyntaxError``, ``IndentationError``
      or ``TabError``, else ``import-error`` (an exception, ``SystemExit``, a refused module, a crash).
    - ``error`` when checks ran: ``timeout`` when every check that did not pass (held back ones aside)
      ran out of time, else ``error`` (it raised, crashed or returned something unreadable).
    - A quiz's ``error`` (answers that could not be read) stays ``error``.
    """
    if exercise.status != "error":
        return exercise.status
    if exercise.kind == "quiz":
        return "error"
    checks = exercise.checks
    if checks and not reached_checks(exercise):
        if any(c.status == "timeout" for c in checks):
            return "timeout"
        return "syntax-error" if _SYNTAX.search(exercise.reason) else "import-error"
    judged = [c for c in checks if c.status not in ("passed", "skipped")]
    if judged and all(c.status == "timeout" for c in judged):
        return "timeout"
    return "error"


def to_data(record: Any, *, exclude_none: bool = False) -> dict[str, Any]:
    """A result record as plain JSON-ready data, fields in declaration order (``dataclasses.asdict``'s result).

    Built directly rather than with ``asdict``, which deep-copies every
    value: a report of 'all' has some 1,500 of them, and a batch writes one
    per learner. Lists and dicts are rebuilt; the rest are immutable values.
    """
    return _as_data(record, exclude_none)


def _as_data(value: Any, drop_none: bool) -> Any:
    if type(value) in _PLAIN:
        return value
    names = _FIELD_NAMES.get(type(value))
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in fields(value))
    if names is not None:
        data = {}
        for name in names:
            item = getattr(value, name)
            if item is not None or not drop_none:
                data[name] = _as_data(item, drop_none)
        return data
    if isinstance(value, list):
        return [_as_data(item, drop_none) for item in value]
    if isinstance(value, tuple):
        return type(value)(_as_data(item, drop_none) for item in value)
    if isinstance(value, dict):
        return {key: _as_data(item, drop_none) for key, item in value.items() if not (drop_none and item is None)}
    return value


# The result classes' field names in declaration order, looked up for every record written;
# other dataclasses (none in a report) are asked each time.
_FIELD_NAMES = {
    record: tuple(f.name for f in fields(record))
    for record in (Adjustment, FailingOutput, CheckResult, ExerciseResult, SandboxInfo, Report)
}
# What the formats read but the JSON result leaves out: the output cut by check (its whole is ``output``).
_NOT_IN_JSON = ("printed",)
_PLAIN = frozenset({str, int, float, bool, type(None)})


def report_to_json(report: Report) -> str:
    """The contract's JSON result: fields in declaration order, ``None`` fields left out, UTF-8 text.

    Scores are finite (sums of points), so plain ``json`` writes exactly what
    pydantic would; a test holds the two to the same bytes. A value JSON
    cannot hold (``nan``) is a ``ValueError``, never a non-standard token.
    ``ExerciseResult.printed`` is left out: ``output`` holds all it holds.
    """
    data = to_data(report, exclude_none=True)
    for exercise in data.get("exercises", []):
        for name in _NOT_IN_JSON:
            exercise.pop(name, None)
    # The standard library indents in pure Python; its compact writer is C. msgspec then lays the compact text
    # out as ``indent=2`` would, token for token: numbers and escapes are copied, not re-encoded, so the bytes
    # are the standard library's (its own encoder writes some floats differently, hence not used).
    compact = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return msgspec.json.format(compact, indent=2)
    except UnicodeEncodeError:  # a lone surrogate, which msgspec cannot hold as UTF-8: written as before
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def report_from_json(text: str | bytes) -> Report:
    """A report read back from its JSON, validated field by field; ``ValueError`` when it is not one."""
    return _report_adapter().validate_json(text)


def report_from_worker(text: str | bytes) -> Report:
    """A report one of our own grading processes just wrote, rebuilt without pydantic.

    The batch command reads one per learner; validating them with pydantic
    would cost it importing pydantic and building a validator (about 0.25 s
    of CPU) for text :func:`report_to_json` wrote. The records still refuse
    unknown or missing fields, unknown statuses and empty reasons
    (``ValueError``); a file read back from disk goes through
    :func:`report_from_json` instead.
    """
    try:
        data = dict(json.loads(text))
        sandbox = data.pop("sandbox", None)
        exercises = [_exercise_from_data(item) for item in data.pop("exercises", [])]
        return Report(**data, exercises=exercises, sandbox=None if sandbox is None else SandboxInfo(**sandbox))
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"not a report: {exc}") from None


def _check_from_data(item: Any) -> CheckResult:
    failing = item.get("failing")
    if failing is None:
        return CheckResult(**item)
    return CheckResult(**dict(item, failing=FailingOutput(**failing)))


def _exercise_from_data(item: Any) -> ExerciseResult:
    item = dict(item, checks=[_check_from_data(check) for check in item.get("checks", [])])
    if item.get("adjustments") is not None:
        item["adjustments"] = [Adjustment(**change) for change in item["adjustments"]]
    return ExerciseResult(**item)


@functools.lru_cache(maxsize=1)
def _report_adapter() -> Any:
    """Pydantic's validator of a whole report, built on first use (only :func:`report_from_json` needs it)."""
    from pydantic import TypeAdapter

    return TypeAdapter(Report)
