"""What a batch writes besides each learner's grading: the gradebook, summary, report and pages of the class.

Rebuilt from every stored result of the learners now in the class after each
run (``rebuild_outputs``), with the instructor's overrides applied; each
learner's output paths (``output_paths``) and the atomic write every output
goes through (``write_output``) live here too, since both the run and the
rebuild use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.batch.cache import (
    read_key,
    write_atomically,
)
from grader.batch.gradebook import GradebookRow, format_gradebook
from grader.batch.html import format_report_html
from grader.batch.items import format_items_csv, quiz_items
from grader.batch.learners import Learner
from grader.batch.mistakes import (
    FailingRecords,
    SharedMistake,
    failing_from_json,
    give_failing,
    shared_mistakes,
)
from grader.batch.overrides import Override, readjust
from grader.batch.roster import class_roster
from grader.batch.similarity_html import PAGE as SIMILARITY_PAGE
from grader.batch.similarity_html import similarity_page
from grader.batch.summary import (
    ClassStats,
    class_stats,
    format_summary_markdown,
    similarity_markdown,
)
from grader.errors import UsageError
from grader.results import Report, report_from_json
from grader.spec.models import Exercise, ImplementationExercise, QuizExercise

__all__ = [
    "failing_path",
    "feedback_text",
    "output_paths",
    "read_failing",
    "rebuild_outputs",
    "write_output",
]


def output_paths(out_dir: Path, learner: Learner) -> tuple[Path, Path, Path]:
    """A learner's result, feedback and key files in ``out_dir``, named by the learner's stem."""
    results = out_dir / "results"
    stem = learner.stem
    return results / f"{stem}.json", out_dir / "feedback" / f"{stem}.md", results / f"{stem}.key"


def failing_path(out_dir: Path, learner: Learner) -> Path:
    """The learner's failing cases, for the shared mistakes (``batch.mistakes``): the instructor's alone."""
    return out_dir / "failing" / f"{learner.stem}.json"


def read_failing(out_dir: Path, learner: Learner) -> FailingRecords:
    """The failing cases stored for the learner; none when the file is missing or not one the batch wrote."""
    try:
        return failing_from_json(failing_path(out_dir, learner).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def write_output(path: Path, text: str) -> None:
    """``write_atomically``; an output the batch cannot write is the output folder's fault, said in one line."""
    try:
        write_atomically(path, text)
    except OSError as error:
        raise UsageError(f"{path}: the batch cannot write there ({error.strerror or error})") from None


def feedback_text(report: Report) -> str:
    """Markdown feedback when that format exists, else the text report in a fence."""
    from grader.report import FORMATS, render

    if "markdown" in FORMATS:
        return render(report, "markdown")
    text = render(report, "text")
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    fence = "`" * max(3, longest + 1)
    return f"# Feedback on {report.submission}\n\n{fence}text\n{text}{fence}\n"


def rebuild_outputs(
    out_dir: Path,
    learners: list[Learner],
    exercises: list[Exercise],
    title: str,
    notes: list[str],
    stored: dict[str, Report] | None = None,
    adjust: list[Override] | None = None,
    similarity: Sequence[str] | None = None,
) -> tuple[ClassStats, list[str], list[str]]:
    """Gradebook, summary and report from every stored result of the learners now in the class.

    ``stored``: the results this run wrote, already parsed (the others are read back from disk).
    ``adjust``: the overrides, applied to the results as grading gave them; a learner's JSON and feedback
    are rewritten whenever what was applied to them changes. ``similarity``: as ``run_batch`` takes it.
    """
    rows: list[GradebookRow] = []
    reports: dict[str, Report] = {}
    stems: dict[str, str] = {}  # learner name -> the stem of their output files
    failing: dict[str, FailingRecords] = {}
    errors: list[str] = []
    more: list[str] = []
    for learner in learners:
        result, _, key_path = output_paths(out_dir, learner)
        record = read_key(key_path)
        try:
            report = (stored or {}).get(learner.name) or report_from_json(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            more.append(f"no stored result for {learner.name!r}; run the batch again")
            continue
        failed = record is None or record.grader_error is not None
        mine = [override for override in adjust or [] if override.learner == learner.name]
        if failed:
            errors.append(learner.name)
            if mine:
                more.append(f"the overrides for {learner.name!r} wait until the grader grades them")
        elif readjust(report, mine):
            _rewrite(out_dir, learner, report)
        rows.append(GradebookRow(learner=learner.name, report=report, grader_error=failed))
        reports[learner.name] = report
        stems[learner.name] = learner.stem
        failing[learner.name] = read_failing(out_dir, learner)
    known = {learner.stem for learner in learners}
    stale = sorted(p.stem for p in (out_dir / "results").glob("*.json") if p.stem not in known)
    if stale:
        more.append(
            f"{len(stale)} stored result{'s' if len(stale) != 1 else ''} in results/ belong to learners "
            "no longer in the class folder; they are kept but left out of the gradebook"
        )
    ids = [exercise.id for exercise in exercises]
    checks = [
        (e.id, c.id)
        for e in exercises
        for c in (
            e.questions if isinstance(e, QuizExercise) else e.checks if isinstance(e, ImplementationExercise) else []
        )
    ]
    max_score = float(sum(exercise.max_score for exercise in exercises))
    stats = class_stats(reports, checks, max_score, grader_errors=errors, notes=notes + more)
    stats.quiz_items = quiz_items(reports, exercises, left_out=errors)
    if stats.quiz_items is not None:
        write_output(out_dir / "quiz-items.csv", format_items_csv(stats.quiz_items))
    write_output(out_dir / "gradebook.csv", format_gradebook(rows, ids))
    mistakes = _shared_mistakes(reports, failing, errors, stats)
    summary = format_summary_markdown(stats, title=title, mistakes=mistakes)
    page = out_dir / SIMILARITY_PAGE
    if similarity is not None:
        code = {learner.name: learner.path for learner in learners if learner.name in reports}
        text, listed = similarity_page(code, reports, boilerplate=similarity, title=title)
        write_output(page, text)
        summary += similarity_markdown(SIMILARITY_PAGE, listed)
    elif page.is_file():
        page.unlink()  # it showed earlier files, which may have changed since
    write_output(out_dir / "summary.md", summary)
    roster = class_roster(((name, stems[name], report) for name, report in reports.items()), ids, grader_errors=errors)
    write_output(out_dir / "report.html", format_report_html(stats, title=title, roster=roster, mistakes=mistakes))
    return stats, errors, more


def _shared_mistakes(
    reports: dict[str, Report], failing: dict[str, FailingRecords], errors: list[str], stats: ClassStats
) -> list[SharedMistake] | None:
    """The class's shared uncatalogued mistakes; a fault in looking for them is a note, never the batch's failure.

    The reports get their failing cases back for the search (nothing writes them after it).
    """
    try:
        for name, records in failing.items():
            give_failing(reports[name], records)
        return shared_mistakes(reports, left_out=errors)
    except Exception as error:  # the gradebook and every result are already good: say so and go on
        stats.notes.append(f"the shared mistakes could not be worked out ({error.__class__.__name__}: {error})")
        return None


def _rewrite(out_dir: Path, learner: Learner, report: Report) -> None:
    """A learner's JSON and feedback, as ``report`` now is, each written only when it differs from what is there."""
    from grader.report import render

    result, feedback, _ = output_paths(out_dir, learner)
    for path, text in ((result, render(report, "json")), (feedback, feedback_text(report))):
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, ValueError):
            same = False
        if not same:
            write_output(path, text)
