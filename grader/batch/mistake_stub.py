"""``grader batch-mistake``: one shared mistake's example written out as a known-wrong solution stub.

The groups are found again from the batch's output folder (each learner's
``results/STEM.json`` and ``.key``, and ``failing/STEM.json``) exactly as the batch found them for
``summary.md``, so group N here is group N there; learners no longer in the
class folder, and those the grader failed on, are left out as the batch
leaves them out. The example learner's file is read from the class folder
(``Submission``, a notebook's code cells as Python); the stub never names
the learner, since it goes into the course's solutions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.batch.cache import read_key
from grader.batch.mistakes import (
    SharedMistake,
    entry_called,
    failing_from_json,
    give_failing,
    one_line,
    shared_mistakes,
)
from grader.errors import GraderError, UsageError
from grader.results import Report, report_from_json
from grader.submission.bindings import scan_names
from grader.submission.files import read_submission

__all__ = ["MistakeStub", "mistake_stub", "write_mistake_stub"]


@dataclass(frozen=True)
class MistakeStub:
    """What ``grader batch-mistake`` writes and says: the stub's text and the ``known_wrong`` entry naming it."""

    mistake: SharedMistake
    source: str
    entry: str


def mistake_stub(mistake: SharedMistake, number: int, source: str, path: str) -> tuple[str, str]:
    """The stub of a known-wrong solution made from the group's example (``source``), and its ``known_wrong`` entry.

    The stub is the learner's code under a comment saying where it came from, without the learner's name
    (it goes into the course's solutions); the entry names ``path`` and the group's check in ``must_fail``,
    with a misconception for the author to write before ``grader validate``.
    """
    share = f"{len(mistake.learners)} learners"
    header = (
        f"# A known-wrong solution for {mistake.exercise}: the code of one of the {share} of batch group "
        f"{number},\n"
        f"# who all fail {', '.join(mistake.checks)}. On {mistake.check}, every one of them gave the same output\n"
        f"# for {one_line(mistake.input, 300)}\n"
        f"#   got: {one_line(mistake.got, 300)}\n"
        f"#   expected: {one_line(mistake.expected, 300)}\n"
        "# List it under the exercise's known_wrong (the entry grader batch-mistake printed), write its\n"
        "# misconception, then run grader validate.\n\n"
    )
    slug = f"shared-{mistake.check}-{number}"
    entry = (
        f"  - id: {slug}\n"
        f"    path: {path}\n"
        "    misconception: >-\n"
        f"      TODO: what these {share} believe; shown to a learner whose output matches this solution's.\n"
        f"    must_fail: [{', '.join(mistake.checks)}]\n"
    )
    return header + source, entry


def class_mistakes(out_dir: Path, class_dir: Path) -> tuple[list[SharedMistake], dict[str, str]]:
    """The shared mistakes of the batch in ``out_dir`` (as ``summary.md`` lists them), and each learner's entry."""
    results = out_dir / "results"
    if not results.is_dir():
        raise UsageError(f"{out_dir}: not the output folder of grader batch (it has no results/ folder)")
    reports: dict[str, Report] = {}
    entries: dict[str, str] = {}
    failed: list[str] = []
    for key_path in sorted(results.glob("*.key")):
        record = read_key(key_path)
        result = key_path.with_suffix(".json")
        if record is None or not result.is_file() or not (class_dir / record.entry).exists():
            continue
        try:
            report = report_from_json(result.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise UsageError(f"{result}: not a result grader batch wrote ({error}); run the batch again") from None
        try:  # as the batch reads them: a missing or unreadable file of failing cases is none
            give_failing(report, failing_from_json((out_dir / "failing" / result.name).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
        reports[record.learner] = report
        entries[record.learner] = record.entry
        if record.grader_error is not None:
            failed.append(record.learner)
    return shared_mistakes(reports, left_out=failed), entries


def _example_source(class_dir: Path, entry: str, function: str) -> str:
    """The source of the example learner's file that defines ``function``."""
    where = class_dir / entry
    try:
        submission = read_submission(where)
    except GraderError as error:
        raise UsageError(f"{where}: the example's work cannot be read ({error})") from None
    modules = sorted(submission.python.items())
    texts = [(name, raw.decode("utf-8", "replace")) for name, raw in modules]
    defining = [(name, text) for name, text in texts if function in scan_names(text, [function]).bound]
    chosen = defining or (texts if len(texts) == 1 else [])
    if not chosen:
        raise UsageError(f"{where}: no Python file there defines {function}(); was the class folder changed?")
    return chosen[0][1]


def write_mistake_stub(
    out_dir: Path, number: int, class_dir: Path, destination: Path, *, root: Path | None = None
) -> MistakeStub:
    """Write group ``number``'s example to ``destination`` as a known-wrong stub; never overwrites a file.

    ``root``: the project's folder (the one holding the specs' folder); the entry names the stub relative to
    it when the stub lies inside, as a spec's ``path:`` is, else as given.
    """
    mistakes, _ = class_mistakes(out_dir, class_dir)
    if not mistakes:
        raise UsageError(f"{out_dir}: the batch found no shared mistake to write out")
    if not 1 <= number <= len(mistakes):
        raise UsageError(
            f"group {number}: the batch in {out_dir} found {len(mistakes)} shared mistake"
            f"{'s' if len(mistakes) != 1 else ''} (numbered 1 to {len(mistakes)} in summary.md)"
        )
    if destination.exists():
        raise UsageError(f"{destination}: already exists; the stub is never written over a file")
    mistake = mistakes[number - 1]
    source = _example_source(class_dir, mistake.entry, entry_called(mistake.input))
    named = destination.as_posix()
    if root is not None and destination.resolve().is_relative_to(root):
        named = destination.resolve().relative_to(root).as_posix()
    text, entry = mistake_stub(mistake, number, source, named)
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        with destination.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise UsageError(f"{destination}: cannot be written ({error.strerror or error})") from None
    return MistakeStub(mistake=mistake, source=text, entry=entry)
