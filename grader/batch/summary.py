"""The class picture: scores, their spread, and the checks most learners failed, with why.

``class_stats`` turns every learner's report into a ``ClassStats``;
``format_summary_markdown`` and ``format_summary_text`` render it for
``summary.md`` and the terminal. Learners the grader failed on are listed,
not counted: a grader fault says nothing about the class.

For each check, *did not pass* counts every learner who did not pass it,
including those who did not attempt the exercise; the most common reason is
taken among those who attempted it and failed, grouped by the known mistake
the grader matched when there is one, else by the first sentence of the
reason with its numbers taken out, so ``softmax([1000, 1001])`` and
``softmax([800, 0])`` failing the same way count together.

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
from grader.report._common import printable
from grader.report.markdown_safe import markdown_code, markdown_text
from grader.results import CheckResult, Report

__all__ = ["CheckStat", "ClassStats", "class_stats", "format_summary_markdown", "format_summary_text",
           "reason_group"]

BIN_LABELS = [f"{10 * i}-{10 * i + 9}%" for i in range(10)] + ["100%"]
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z(])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:inf|nan)\b")


@dataclass
class CheckStat:
    """How the class did on one check (or quiz question)."""

    exercise: str
    check: str
    learners: int
    not_passed: int = 0
    not_attempted: int = 0
    reason: str | None = None
    reason_count: int = 0
    failed_attempts: int = 0

    @property
    def share(self) -> float:
        return self.not_passed / self.learners if self.learners else 0.0


@dataclass
class ClassStats:
    """Scores, distribution and per-check failures of the learners graded."""

    learners: int
    max_score: float
    scores: list[float] = field(default_factory=list)
    histogram: list[int] = field(default_factory=lambda: [0] * len(BIN_LABELS))
    checks: list[CheckStat] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

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
        return "Known mistake: " + check.diagnosis
    return _NUMBER.sub("#", first_sentence(check.reason))


def _bin(score: float, max_score: float) -> int:
    if max_score <= 0:
        return 0
    if score >= max_score - 1e-9:
        return len(BIN_LABELS) - 1
    return min(9, max(0, int(score / max_score * 100 // 10)))


def class_stats(reports: dict[str, Report], checks: list[tuple[str, str]], max_score: float, *,
                grader_errors: Sequence[str] = (), notes: Sequence[str] = ()) -> ClassStats:
    """Statistics over ``reports`` (learner name to report), for ``checks`` (exercise id, check id) in spec order.

    Learners in ``grader_errors`` are left out of every number.
    """
    counted = {name: report for name, report in sorted(reports.items()) if name not in set(grader_errors)}
    stats = ClassStats(learners=len(counted), max_score=max_score, grader_errors=sorted(grader_errors),
                       notes=list(notes))
    for report in counted.values():
        stats.scores.append(report.score)
        stats.histogram[_bin(report.score, report.max_score or max_score)] += 1
    for exercise_id, check_id in checks:
        stat = CheckStat(exercise=exercise_id, check=check_id, learners=len(counted))
        groups: dict[str, list[str]] = {}
        for report in counted.values():
            exercise = next((e for e in report.exercises if e.id == exercise_id), None)
            check = next((c for c in exercise.checks if c.id == check_id), None) if exercise else None
            if check is not None and check.status == "passed":
                continue
            stat.not_passed += 1
            if exercise is None or exercise.status == "missing" or check is None or check.status == "skipped":
                stat.not_attempted += 1
                continue
            groups.setdefault(reason_group(check), []).append(check.reason)
        if groups:
            key, members = min(groups.items(), key=lambda item: (-len(item[1]), item[0]))
            stat.reason = key if key.startswith("Known mistake: ") else first_sentence(members[0])
            stat.reason_count = len(members)
            stat.failed_attempts = sum(len(group) for group in groups.values())
        stats.checks.append(stat)
    order = {pair: index for index, pair in enumerate(checks)}
    stats.checks.sort(key=lambda s: (-s.share, -(s.not_passed - s.not_attempted), order[(s.exercise, s.check)]))
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
    return [f"Learners graded: {stats.learners}",
            f"Mean score: {format_points(stats.mean)}/{top}   Median: {format_points(stats.median)}/{top}"]


def format_summary_markdown(stats: ClassStats, *, title: str) -> str:
    """``summary.md``: the headline, the distribution, and every check by share of learners failing it."""
    lines = [f"# {markdown_text(title)}", ""]
    lines += [line + "  " for line in _headline(stats)]
    if stats.grader_errors:
        lines += ["", f"**The grader failed on {len(stats.grader_errors)} learner"
                      f"{'s' if len(stats.grader_errors) != 1 else ''}** (left out of every number below; "
                      "see their `results/*.key` files, then run the batch again): "
                      + ", ".join(markdown_code(name) for name in stats.grader_errors)]
    lines += ["", "## Score distribution", "", "| score | learners | |", "|---|---:|---|"]
    most = max(stats.histogram) or 1
    for label, count in zip(BIN_LABELS, stats.histogram):
        lines.append(f"| {label} | {count} | {'#' * round(20 * count / most)} |")
    lines += ["", "## Checks, most failed first", "",
              ("Did not pass counts learners who failed the check or did not attempt its exercise; "
               "the most common reason is among those who attempted it."), "",
              "| exercise | check | did not pass | not attempted | most common reason |", "|---|---|---:|---:|---|"]
    for stat in stats.checks:
        reason = (f"{markdown_text(stat.reason, table=True)} ({stat.reason_count} of {stat.failed_attempts})"
                  if stat.reason else "")
        lines.append(f"| {markdown_text(stat.exercise, table=True)} | {markdown_text(stat.check, table=True)} "
                     f"| {_percent(stat.share)} ({stat.not_passed}) "
                     f"| {stat.not_attempted} | {reason} |")
    if stats.notes:
        lines += ["", "## Notes", ""] + [f"- {markdown_text(note)}" for note in stats.notes]
    return "\n".join(lines) + "\n"


def format_summary_text(stats: ClassStats, *, top: int = 5) -> str:
    """A few lines for the terminal: headline, distribution, the checks most failed."""
    lines = _headline(stats)
    if stats.grader_errors:
        lines.append(f"The grader failed on {len(stats.grader_errors)}: "
                     + ", ".join(_plain(name) for name in stats.grader_errors))
    if stats.scores:
        lines.append("Distribution: " + "  ".join(f"{label} {count}" for label, count
                                                   in zip(BIN_LABELS, stats.histogram) if count))
    failing = [s for s in stats.checks if s.not_passed][:top]
    if failing:
        lines.append("Most failed checks:")
        for stat in failing:
            line = f"  {_percent(stat.share):>4}  {stat.exercise}/{stat.check}"
            if stat.reason:
                reason = _plain(stat.reason)
                reason = reason if len(reason) <= 110 else reason[:107] + "..."
                line += f": {reason}"
            lines.append(line)
    return "\n".join(lines) + "\n"
