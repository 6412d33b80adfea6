"""The class picture: scores, their spread, how each exercise ended, and the checks most learners failed, with why.

``class_stats`` turns every learner's report into a ``ClassStats``;
``format_summary_markdown`` and ``format_summary_text`` render it for
``summary.md`` and the terminal (``grader.batch.html`` for ``report.html``,
from the same numbers). Learners the grader failed on are listed, not
counted: a grader fault says nothing about the class.

Per exercise, learners are counted by the gradebook's status
(``grader.batch.status``), so the summary and the gradebook agree. A learner
whose code stopped before any check (``syntax-error``, ``import-error``,
``timeout``, or a quiz whose answers could not be read) is counted there
once, with the most common such reason, and not under each check: one file
that does not import is one problem, not forty.

Per check, the share is taken among the learners who were judged on it:
they attempted the exercise, their code ran, and the check was not held
back by the exercise's gate. Each learner counts once per check. The most
common reason counts learners, grouped by the known mistake the grader
matched when there is one, else by the first sentence of the reason with its
numbers taken out, so ``softmax([1000, 1001])`` and ``softmax([800, 0])``
failing the same way count together.

Reasons, notes and learner names are the learners' text as much as the
grader's (an exception message, a folder name), so ``summary.md`` shows them
through ``grader.report.markdown_safe``: reasons and notes as escaped prose
(as code when a renderer would link them), learner names as code; the
terminal summary shows them as one line with control characters escaped.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from grader.batch.gradebook import format_points
from grader.batch.items import ITEMS_NOTE, STRONG_CHOSEN, QuestionStat, format_discrimination, format_share
from grader.batch.mistakes import SharedMistake, format_mistakes_markdown
from grader.batch.status import STATUSES, exercise_status
from grader.batch.status import stopped_before_checks as _stopped_before_checks
from grader.report._common import printable
from grader.report.markdown_safe import markdown_code, markdown_text
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report
from grader.submission.excerpts import SHOWN, excerpt, listing

__all__ = [
    "CHECKS_NOTE",
    "EXERCISES_NOTE",
    "CheckStat",
    "ClassStats",
    "ExerciseStat",
    "class_stats",
    "format_summary_markdown",
    "format_summary_text",
    "items_nothing",
    "judged_text",
    "option_text",
    "reason_group",
    "similarity_markdown",
    "stopped_before_checks",
    "stopped_text",
]

BIN_LABELS = [f"{10 * i}-{10 * i + 9}%" for i in range(10)] + ["100%"]
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z(])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:inf|nan)\b")
_KNOWN = "Known mistake: "


@dataclass
class CheckStat:
    """How the learners judged on one check (or quiz question) did: ``not_passed`` of ``judged``."""

    exercise: str
    check: str
    judged: int = 0
    not_passed: int = 0
    reason: str | None = None
    reason_count: int = 0

    @property
    def share(self) -> float:
        return self.not_passed / self.judged if self.judged else 0.0


@dataclass
class ExerciseStat:
    """How many learners ended one exercise in each gradebook status, and the most common reason their code stopped
    before any check (``reason_count`` of ``stopped`` learners)."""

    exercise: str
    statuses: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    stopped_by: dict[str, int] = field(default_factory=dict)
    reason: str | None = None
    reason_count: int = 0

    @property
    def stopped(self) -> int:
        return sum(self.stopped_by.values())


@dataclass
class ClassStats:
    """Scores, distribution, per-exercise statuses and per-check failures of the learners graded."""

    learners: int
    max_score: float
    scores: list[float] = field(default_factory=list)
    histogram: list[int] = field(default_factory=lambda: [0] * len(BIN_LABELS))
    exercises: list[ExerciseStat] = field(default_factory=list)
    checks: list[CheckStat] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    quiz_items: list[QuestionStat] | None = None  # None: the assignment has no quiz (grader.batch.items)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.scores) if self.scores else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.scores) if self.scores else None


def first_sentence(text: str) -> str:
    """Up to the first full stop followed by a capital, so ``array([1., 2.])`` is not cut."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def reason_group(check: CheckResult) -> str:
    """The key learners failing ``check`` the same way share."""
    if check.diagnosis:
        return _KNOWN + check.diagnosis
    return _NUMBER.sub("#", first_sentence(check.reason))


def stopped_before_checks(exercise: ExerciseResult, status: str) -> bool:
    """Whether the learner's work for ``exercise`` stopped before any check reached a verdict: a file that did not
    parse, import or finish its import in time, or a quiz whose answers could not be read (every question in
    error). A timeout after some checks ran is counted in its status column alone (``batch.status``)."""
    return _stopped_before_checks(exercise, status)


def _why_stopped(exercise: ExerciseResult) -> str:
    """What stopped the code, in one sentence: what the first call that ran got (a timeout's limit), else the
    exercise's own reason (the import failure)."""
    got = next((c.got for c in exercise.checks if c.status != "passed" and c.got), None)
    if got:
        return first_sentence(got[:1].upper() + got[1:]).rstrip(".") + "."
    return first_sentence(exercise.reason)


def _bin(score: float, max_score: float) -> int:
    if max_score <= 0:
        return 0
    if score >= max_score - 1e-9:
        return len(BIN_LABELS) - 1
    return min(9, max(0, int(score / max_score * 100 // 10)))


def _most_common(groups: dict[str, list[str]]) -> tuple[str, list[str]]:
    """The largest group (a known mistake before other reasons of the same size, then by key)."""
    return min(groups.items(), key=lambda item: (-len(item[1]), not item[0].startswith(_KNOWN), item[0]))


def class_stats(
    reports: dict[str, Report],
    checks: list[tuple[str, str]],
    max_score: float,
    *,
    grader_errors: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> ClassStats:
    """Statistics over ``reports`` (learner name to report), for ``checks`` (exercise id, check id) in spec order.

    Learners in ``grader_errors`` are left out of every number.
    """
    counted = {name: report for name, report in sorted(reports.items()) if name not in set(grader_errors)}
    stats = ClassStats(
        learners=len(counted), max_score=max_score, grader_errors=sorted(grader_errors), notes=list(notes)
    )
    chosen = [name for name, report in counted.items() if any(exercise.note for exercise in report.exercises)]
    if chosen:  # which file was graded was a choice (grader.submission.entry_files): the instructor may want to look
        stats.notes.append(
            f"{len(chosen)} learner{'s' if len(chosen) != 1 else ''} handed in several files defining one entry; "
            "each result's note names the file graded (the exercise's entry file, else the most recently "
            f"modified): "
            f"{listing([excerpt(name) for name in chosen[:SHOWN]], len(chosen), separator=', ')}."
        )
    for report in counted.values():
        stats.scores.append(report.score)
        stats.histogram[_bin(report.score, report.max_score or max_score)] += 1
    exercise_ids = list(dict.fromkeys(exercise_id for exercise_id, _ in checks))
    # Per learner and exercise: the result, when its checks reached verdicts worth counting one by one.
    judged: dict[tuple[str, str], ExerciseResult] = {}
    for exercise_id in exercise_ids:
        stat = ExerciseStat(exercise=exercise_id)
        stopped: dict[tuple[str, str], list[str]] = {}  # (status, reason without numbers): the learners' reasons
        for name, report in counted.items():
            exercise = next((e for e in report.exercises if e.id == exercise_id), None)
            status = exercise_status(exercise) if exercise is not None else "missing"
            stat.statuses[status] += 1
            if exercise is None or status == "missing":
                continue
            if stopped_before_checks(exercise, status):
                stat.stopped_by[status] = stat.stopped_by.get(status, 0) + 1
                why = _why_stopped(exercise)
                stopped.setdefault((status, _NUMBER.sub("#", why)), []).append(why)
            else:
                judged[name, exercise_id] = exercise
        if stopped:  # of reasons as common, one of the commonest way to stop: each syntax error reads differently
            _, members = min(stopped.items(), key=lambda item: (-len(item[1]), -stat.stopped_by[item[0][0]], item[0]))
            stat.reason, stat.reason_count = members[0], len(members)
        stats.exercises.append(stat)
    for exercise_id, check_id in checks:
        check_stat = CheckStat(exercise=exercise_id, check=check_id)
        groups: dict[str, list[str]] = {}
        for name in counted:
            exercise = judged.get((name, exercise_id))
            check = next((c for c in exercise.checks if c.id == check_id), None) if exercise else None
            if check is None or check.status == "skipped":  # not attempted, stopped early, or held back by a gate
                continue
            check_stat.judged += 1
            if check.status != "passed":
                check_stat.not_passed += 1
                groups.setdefault(reason_group(check), []).append(check.reason)
        if groups:
            key, members = _most_common(groups)
            check_stat.reason = key if key.startswith(_KNOWN) else first_sentence(members[0])
            check_stat.reason_count = len(members)
        stats.checks.append(check_stat)
    order = {pair: index for index, pair in enumerate(checks)}
    stats.checks.sort(key=lambda s: (-s.share, -s.not_passed, order[(s.exercise, s.check)]))
    return stats


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def _plain(text: str) -> str:
    """One line of printable text: learner-made text may hold control characters or terminal escapes."""
    return " ".join(printable(text).split())


def _headline(stats: ClassStats) -> list[str]:
    if stats.mean is None or stats.median is None:
        return ["No learner was graded."]
    top = format_points(stats.max_score)
    return [
        f"Learners graded: {stats.learners}",
        f"Mean score: {format_points(stats.mean)}/{top}   Median: {format_points(stats.median)}/{top}",
    ]


EXERCISES_NOTE = (
    "How each exercise ended, as in the gradebook's status columns. A learner whose code stopped "
    "before any check (syntax-error, import-error, timeout, or a quiz whose answers could not be "
    "read) is counted here once, with the most common such reason, and not under each check."
)
CHECKS_NOTE = (
    "Each check's share is taken among the learners judged on it: they attempted the exercise, their "
    "code ran, and the check was not held back by the exercise's gate. The most common reason counts "
    "learners, each once."
)


def stopped_text(stat: ExerciseStat) -> str:
    """``2 syntax-error, 1 timeout``: how the learners whose code stopped before any check stopped."""
    return ", ".join(
        f"{count} {status}"
        for status, count in sorted(stat.stopped_by.items(), key=lambda item: STATUSES.index(item[0]))
    )


def judged_text(stat: CheckStat) -> str:
    """``67% (2 of 3)``, or ``-`` when no learner was judged on the check."""
    return f"{_percent(stat.share)} ({stat.not_passed} of {stat.judged})" if stat.judged else "-"


def format_summary_markdown(stats: ClassStats, *, title: str, mistakes: list[SharedMistake] | None = None) -> str:
    """``summary.md``: the headline, the distribution, how each exercise ended, and the checks by share failing;
    then the shared mistakes no known-wrong solution catches (``grader.batch.mistakes``), when they were sought."""
    lines = [f"# {markdown_text(title)}", ""]
    lines += [line + "  " for line in _headline(stats)]
    if stats.grader_errors:
        lines += [
            "",
            f"**The grader failed on {len(stats.grader_errors)} learner"
            f"{'s' if len(stats.grader_errors) != 1 else ''}** (left out of every number below; "
            "the details are in their `results/*.key` files; the next run tries each once more, then keeps "
            "the failure until its files change or `--force`): "
            + ", ".join(markdown_code(name) for name in stats.grader_errors),
        ]
    lines += ["", "## Score distribution", "", "| score | learners | |", "|---|---:|---|"]
    most = max(stats.histogram) or 1
    for label, count in zip(BIN_LABELS, stats.histogram, strict=True):
        lines.append(f"| {label} | {count} | {'#' * round(20 * count / most)} |")
    lines += [
        "",
        "## Exercises",
        "",
        EXERCISES_NOTE,
        "",
        "| exercise | " + " | ".join(STATUSES) + " | most common reason it stopped before any check |",
        "|---|" + "---:|" * len(STATUSES) + "---|",
    ]
    for exercise in stats.exercises:
        reason = (
            f"{markdown_text(exercise.reason, table=True)} ({exercise.reason_count} of {exercise.stopped})"
            if exercise.reason
            else ""
        )
        counts = " | ".join(str(exercise.statuses[status]) for status in STATUSES)
        lines.append(f"| {markdown_text(exercise.exercise, table=True)} | {counts} | {reason} |")
    lines += [
        "",
        "## Checks, most failed first",
        "",
        CHECKS_NOTE,
        "",
        "| exercise | check | did not pass | most common reason |",
        "|---|---|---:|---|",
    ]
    for stat in stats.checks:
        reason = (
            f"{markdown_text(stat.reason, table=True)} ({stat.reason_count} of {stat.not_passed})"
            if stat.reason
            else ""
        )
        lines.append(
            f"| {markdown_text(stat.exercise, table=True)} | {markdown_text(stat.check, table=True)} "
            f"| {judged_text(stat)} | {reason} |"
        )
    lines += _items_markdown(stats.quiz_items)
    lines += format_mistakes_markdown(mistakes)
    if stats.notes:
        lines += ["", "## Notes", ""] + [f"- {markdown_text(note)}" for note in stats.notes]
    return inert_lines("\n".join(lines) + "\n")


def items_nothing(items: list[QuestionStat]) -> str | None:
    """The sentence that replaces the quiz item statistics when there are none to give, else ``None``."""
    if not items or not any(item.answered for item in items):
        return "No learner answered a quiz question, so there are no item statistics to report."
    return None


def option_text(item: QuestionStat) -> list[str]:
    """``top third: 3 learners``, then ``A (correct) 50%, top third 33%; never chosen``: one entry per option of a
    choice question."""
    parts = [f"top third: {item.top} learner{'s' if item.top != 1 else ''}"] if item.top and item.options else []
    for option in item.options:
        text = f"{option.letter}{' (correct)' if option.correct else ''} {format_share(item.share(option))}"
        if item.top:
            text += f", top third {format_share(item.top_share(option))}"
        if option.flags:
            text += "; " + ", ".join(option.flags)
        parts.append(text)
    return parts


def _items_markdown(items: list[QuestionStat] | None) -> list[str]:
    if items is None:
        return []
    lines = ["", "## Quiz questions", "", ITEMS_NOTE, ""]
    nothing = items_nothing(items)
    if nothing:
        return lines + [nothing]
    lines += [
        "| exercise | question | answered | facility | discrimination | options |",
        "|---|---|---:|---:|---:|---|",
    ]
    for item in items:
        options = "<br>".join(option_text(item)) if item.options else ""
        lines.append(
            f"| {markdown_text(item.exercise, table=True)} | {markdown_text(item.question, table=True)} "
            f"| {item.answered} | {format_share(item.facility)} | {format_discrimination(item.discrimination)} "
            f"| {options} |"
        )
    return lines


def format_summary_text(stats: ClassStats, *, top: int = 5) -> str:
    """A few lines for the terminal: headline, distribution, code that stopped early, the checks most failed."""
    lines = _headline(stats)
    if stats.grader_errors:
        lines.append(
            f"The grader failed on {len(stats.grader_errors)}: "
            + ", ".join(_plain(name) for name in stats.grader_errors)
        )
    if stats.scores:
        lines.append(
            "Distribution: "
            + "  ".join(f"{label} {count}" for label, count in zip(BIN_LABELS, stats.histogram, strict=True) if count)
        )
    stopped = [e for e in stats.exercises if e.stopped]
    if stopped:
        lines.append("Stopped before any check:")
        lines += [f"  {e.exercise}: {stopped_text(e)}" for e in stopped]
    failing = [s for s in stats.checks if s.not_passed][:top]
    if failing:
        lines.append("Most failed checks:")
        for stat in failing:
            line = f"  {_percent(stat.share):>4}  {stat.exercise}/{stat.check} ({stat.not_passed} of {stat.judged})"
            if stat.reason:
                reason = _plain(stat.reason)
                reason = reason if len(reason) <= 110 else reason[:107] + "..."
                line += f": {reason}"
            lines.append(line)
    strong = [
        f"{item.exercise}/{item.question} {option.letter}"
        for item in stats.quiz_items or []
        for option in item.options
        if STRONG_CHOSEN in option.flags
    ]
    if strong:
        lines.append(f"Quiz options chosen by strong learners (quiz-items.csv): {listing(strong, separator=', ')}")
    return inert_lines("\n".join(lines) + "\n")


def similarity_markdown(page: str, pairs: int) -> str:
    """The section of ``summary.md`` pointing to the similarity page, added only when the batch wrote one."""
    listed = f"{pairs} pair{'s' if pairs != 1 else ''} of learners" if pairs else "No pair of learners"
    return (
        f"\n## Similar work\n\n{listed} with unusually similar code or wrong outputs: see [{page}]({page}). "
        "It is evidence to look at, not a verdict, and changes no grade.\n"
    )
