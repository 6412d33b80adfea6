"""Shared uncatalogued mistakes: learners who failed a check the same way, in a way no known-wrong solution explains.

After a batch, learners are grouped by check and by the hidden input of their
first failing case (``CheckResult.failing``, which ``grader batch`` keeps for
the instructor in ``failing/STEM.json``, beside the result): two learners are in one group when their outputs on that
input agree within the check's tolerance (the same shape, every number within
``atol + rtol * |other|``, NaN agreeing with NaN), or, where the output was
not kept as numbers, when the finding's words are the same. A failure the
engine matched to a known-wrong solution (``FailingOutput.known``, or the
``diagnosis`` a learner was shown) is catalogued, and so are the learner's
other failures on that exercise: the engine names a known mistake only on
the checks in its ``must_fail``, and the same code fails others with it
(``no-max-shift`` gives NaN on ``non-negative`` too), which are no new
mistake. Only groups of two or more are reported. The same learners sharing
outputs on several checks of one exercise are one group: the first of those
checks (by id) is shown with its input and output, the others are listed
with it, and all go into the stub's ``must_fail``.

Outputs are first put in buckets by their numbers rounded to a grid some
hundred times coarser than the tolerance, then compared within a bucket
with the first member of each of its first few groups: linear in the class
size. Two outputs within tolerance that round to either side of a grid line
stay apart; for outputs that differ in their last bits (the same mistake,
sums taken in another order) that is vanishingly rare. Groups are numbered
by size, then exercise, check, input and output, with learners by name, so
the same class gives the same groups in the same order on every run. ``grader batch-mistake`` writes a group's example
out as a known-wrong solution stub (``grader.batch.mistake_stub``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from grader.report.markdown_safe import markdown_code, markdown_text
from grader.results import CheckResult, ExerciseResult, FailingOutput, Report, to_data

__all__ = [
    "COMMAND_NOTE",
    "NOTHING_SHARED",
    "SharedMistake",
    "FailingRecords",
    "entry_called",
    "failing_from_json",
    "failing_to_json",
    "give_failing",
    "take_failing",
    "format_mistakes_markdown",
    "mistake_rows",
    "one_line",
    "shared_mistakes",
]

NOTHING_SHARED = (
    "No two learners failed a check with the same output on the same input in a way no known-wrong "
    "solution explains: there is no shared mistake to catalogue."
)
# A check's own tolerance may be zero (an exact property); outputs computed in a different order still agree.
_RTOL_FLOOR, _ATOL_FLOOR = 1e-9, 1e-12
_FAILED = ("failed", "error")
_LEADERS = 4


@dataclass(frozen=True)
class SharedMistake:
    """One group: the check, the input, the shared output against the expected one, and who made it.

    ``learners`` are sorted by name; ``example`` is the first of them, and ``entry`` where its work is
    under the class folder (the result's ``submission``).
    """

    exercise: str
    check: str
    input: str
    got: str
    expected: str
    learners: tuple[str, ...]
    entry: str
    also: tuple[str, ...] = ()

    @property
    def checks(self) -> tuple[str, ...]:
        """Every check the group fails together: ``check``, whose input and output are shown, then ``also``."""
        return (self.check, *self.also)

    @property
    def example(self) -> str:
        return self.learners[0]


def _catalogued(check: CheckResult) -> bool:
    """Whether the engine matched the check's failure to a known-wrong solution (told to the learner or not)."""
    return bool(check.diagnosis or (check.failing is not None and check.failing.known))


def _uncatalogued(exercise: ExerciseResult) -> list[tuple[str, FailingOutput]]:
    """The failed checks' records (check id, record) of an exercise no known mistake explains; none when one does."""
    if any(_catalogued(check) for check in exercise.checks):
        return []
    return [(c.id, c.failing) for c in exercise.checks if c.status in _FAILED and c.failing is not None]


def _float(value: float | str) -> float:
    return float(value)  # "nan", "inf" and "-inf" read back as themselves


def _bucket_keys(records: list[FailingOutput]) -> list[object]:
    """A bucket key for each record, which outputs within tolerance nearly always share: the words where no
    numbers were kept, else each number on a grid some hundred times coarser than the check's relative
    tolerance (zero within ten times its absolute one), computed for all records of one form at once."""
    keys: list[object] = [None] * len(records)
    forms: dict[tuple[object, ...], list[int]] = {}
    for index, failing in enumerate(records):
        if not failing.values:
            keys[index] = ("words", failing.got)
        else:
            shapes = tuple(tuple(shape) for shape in failing.shapes or ())
            forms.setdefault((len(failing.values), shapes), []).append(index)
    for form, indices in forms.items():
        values = np.array([records[i].values for i in indices], dtype=float)
        rtol = np.maximum([records[i].rtol for i in indices], _RTOL_FLOOR)[:, None]
        atol = np.maximum([records[i].atol for i in indices], _ATOL_FLOOR)[:, None]
        bits = np.clip(np.floor(-np.log2(rtol)) - 7, 1, 50)
        with np.errstate(all="ignore"):
            mantissa, exponent = np.frexp(values)
            steps = np.round(mantissa * np.exp2(bits))
            near_zero = np.abs(values) <= 10 * atol
        steps[near_zero], exponent[near_zero] = 0, 0
        odd = ~np.isfinite(values)  # NaN, inf and -inf: a step of their own, outside the grid
        steps[odd] = np.where(np.isnan(values[odd]), 1.0, 2.0 * np.sign(values[odd]))
        exponent[odd] = 1 << 20
        rows = np.stack([exponent.astype(np.int64), steps.astype(np.int64)], axis=-1)
        for row, index in zip(rows, indices, strict=True):
            keys[index] = ("values", form, row.tobytes())
    return keys


def _agree(a: FailingOutput, b: FailingOutput) -> bool:
    """Whether two failing outputs are the same within the looser of their checks' tolerances."""
    if a.values is None or b.values is None:
        return a.values is None and b.values is None and a.got == b.got
    if a.shapes != b.shapes or len(a.values) != len(b.values):
        return False
    rtol, atol = max(a.rtol, b.rtol, _RTOL_FLOOR), max(a.atol, b.atol, _ATOL_FLOOR)
    for left, right in zip(a.values, b.values, strict=True):
        x, y = _float(left), _float(right)
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                return False
        elif math.isinf(x) or math.isinf(y):
            if x != y:
                return False
        elif abs(x - y) > atol + rtol * abs(y):
            return False
    return True


def shared_mistakes(reports: Mapping[str, Report], *, left_out: Iterable[str] = ()) -> list[SharedMistake]:
    """Every group of two or more learners sharing an uncatalogued failing output, largest first.

    ``reports``: learner name to result; learners in ``left_out`` (the grader failed on them) are not read.
    """
    skip = set(left_out)
    # (exercise, check, input) -> the uncatalogued failing records on it, learners in name order
    records: dict[tuple[str, str, str], list[tuple[str, FailingOutput]]] = {}
    entries: dict[str, str] = {}
    for name in sorted(reports):
        if name in skip:
            continue
        report = reports[name]
        entries[name] = report.submission
        for exercise in report.exercises:
            for check_id, failing in _uncatalogued(exercise):
                records.setdefault((exercise.id, check_id, failing.input), []).append((name, failing))
    # the same -> groups, each a list of (learner, failing), first member first
    buckets: dict[tuple[str, str, str], list[list[tuple[str, FailingOutput]]]] = {}
    for where, pending in records.items():
        found: dict[object, list[list[tuple[str, FailingOutput]]]] = {}
        for member, key in zip(pending, _bucket_keys([failing for _, failing in pending]), strict=True):
            groups = found.setdefault(key, [])
            # outputs sharing a bucket but beyond tolerance of each other are rare: a few groups a bucket
            home = next((group for group in groups[:_LEADERS] if _agree(group[0][1], member[1])), None)
            if home is None:
                groups.append([member])
            else:
                home.append(member)
        buckets[where] = [group for groups in found.values() for group in groups]
    merged: dict[tuple[str, tuple[str, ...]], list[tuple[str, FailingOutput]]] = {}
    for (exercise_id, check_id, _), groups in sorted(buckets.items()):
        for group in groups:
            if len(group) >= 2:
                members = tuple(member for member, _ in group)
                merged.setdefault((exercise_id, members), []).append((check_id, group[0][1]))
    mistakes = []
    for (exercise_id, members), shared in merged.items():
        (check_id, failing), *others = shared
        mistakes.append(
            SharedMistake(
                exercise=exercise_id,
                check=check_id,
                input=failing.input,
                got=failing.got,
                expected=failing.expected,
                learners=members,
                entry=entries[members[0]],
                also=tuple(dict.fromkeys(other for other, _ in others if other != check_id)),
            )
        )
    return sorted(mistakes, key=lambda m: (-len(m.learners), m.exercise, m.check, m.input, m.got, m.learners))


FailingRecords = dict[str, dict[str, FailingOutput]]  # exercise id -> check id -> its first failing case


def take_failing(report: Report) -> FailingRecords:
    """Take each check's failing record out of ``report`` (left ``None``), by exercise and check.

    The batch keeps them beside the results (``failing/STEM.json``), so that ``results/STEM.json`` stays the
    contract's JSON result, byte for byte what ``grader grade`` gives, with no hidden input in it.
    """
    taken: FailingRecords = {}
    for exercise in report.exercises:
        for check in exercise.checks:
            if check.failing is not None:
                taken.setdefault(exercise.id, {})[check.id] = check.failing
                check.failing = None
    return taken


def give_failing(report: Report, records: FailingRecords) -> None:
    """Put records taken by ``take_failing`` back on the checks of ``report`` they belong to."""
    for exercise in report.exercises:
        mine = records.get(exercise.id, {})
        for check in exercise.checks:
            if check.id in mine and check.status in _FAILED:
                check.failing = mine[check.id]


def failing_to_json(records: FailingRecords) -> str:
    """The records as JSON text, keys sorted: the same records give the same bytes."""
    data = {e: {c: to_data(record, exclude_none=True) for c, record in checks.items()} for e, checks in records.items()}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def failing_from_json(text: str) -> FailingRecords:
    """Records read back from ``failing_to_json``'s text; ``ValueError`` when they are not such records."""
    try:
        data = json.loads(text)
        return {
            str(e): {str(c): FailingOutput(**dict(record)) for c, record in dict(checks).items()}
            for e, checks in dict(data).items()
        }
    except (TypeError, AttributeError) as error:
        raise ValueError(f"not a file of failing cases ({error})") from None


def entry_called(call: str) -> str:
    """The function a failing input calls: ``softmax`` of ``softmax(z=array([1., 2.]))``."""
    return call.split("(", 1)[0].strip()


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


COMMAND_NOTE = (
    "Each group shares one output on one input of a failed check, and no known-wrong solution explains it. "
    "To make group N's example a known-wrong solution: "
    "grader batch-mistake OUTDIR N --class CLASS_DIR --out solutions/EXERCISE/FILE.py"
)
_CELL = 160


def mistake_rows(mistakes: list[SharedMistake]) -> list[tuple[str, ...]]:
    """One row of plain text per group, as both summary.md and report.html show it: number, exercise, check,
    input, shared output, expected, how many learners, the example learner."""
    return [
        (
            str(number),
            m.exercise,
            m.check + (f" (and {', '.join(m.also)})" if m.also else ""),
            one_line(m.input, _CELL),
            one_line(m.got, _CELL),
            one_line(m.expected, _CELL),
            str(len(m.learners)),
            m.example,
        )
        for number, m in enumerate(mistakes, 1)
    ]


def format_mistakes_markdown(mistakes: list[SharedMistake] | None) -> list[str]:
    """The section of ``summary.md``: a table of the groups, or the sentence saying there are none."""
    if mistakes is None:
        return []
    lines = ["", "## Shared mistakes no known-wrong solution catches", ""]
    if not mistakes:
        return lines + [NOTHING_SHARED]
    lines += [
        markdown_text(COMMAND_NOTE),
        "",
        "| group | exercise | check | input | shared output | expected | learners | example |",
        "|---:|---|---|---|---|---|---:|---|",
    ]
    for row in mistake_rows(mistakes):
        number, exercise, check, call, got, expected, count, example = row
        cells = [markdown_text(text, table=True) for text in (exercise, check, call, got, expected)]
        lines.append(f"| {number} | " + " | ".join(cells) + f" | {count} | {markdown_code(example, table=True)} |")
    return lines
