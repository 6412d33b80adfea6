"""Result records: plain dataclasses that write the contract's JSON as pydantic would, and read it back strictly."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import TypeAdapter

from grader.results import (
    CheckResult,
    ExerciseResult,
    PrintedOutput,
    Report,
    SandboxInfo,
    report_from_json,
    report_from_worker,
    report_to_json,
)
from tests.test_report_formats import CASES


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_is_byte_for_byte_what_pydantic_writes(case: str) -> None:
    """An independent serializer of the same records: field order, None left out, escapes, UTF-8, floats."""
    report = CASES[case]()
    expected = TypeAdapter(Report).dump_json(report, indent=2, exclude_none=True).decode("utf-8")
    assert report_to_json(report) == expected


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("exclude_none", [False, True])
def test_to_data_is_what_asdict_gives_without_sharing_anything(case: str, exclude_none: bool) -> None:
    """``to_data`` builds ``dataclasses.asdict``'s result (minus ``None`` fields when asked) without deep copies."""
    from dataclasses import asdict

    from grader.results import to_data

    def without_none(value):  # type: ignore[no-untyped-def]
        if isinstance(value, dict):
            return {key: without_none(item) for key, item in value.items() if item is not None}
        return [without_none(item) for item in value] if isinstance(value, list) else value

    report = CASES[case]()
    data = to_data(report, exclude_none=exclude_none)
    assert data == (without_none(asdict(report)) if exclude_none else asdict(report))
    assert list(data) == [name for name in asdict(report) if name in data]  # declaration order
    data["exercises"].clear()  # the record's own lists are not handed out
    fresh = to_data(CASES[case](), exclude_none=exclude_none)
    assert to_data(report, exclude_none=exclude_none)["exercises"] == fresh["exercises"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_reads_back_to_the_same_report(case: str) -> None:
    report = CASES[case]()
    assert report_from_json(report_to_json(report)) == report
    assert report_from_worker(report_to_json(report)) == report


def _stored() -> dict:
    report = Report(
        grader_version="0.1.0",
        submission="mine.py",
        score=1,
        max_score=2,
        exercises=[
            ExerciseResult(
                id="e",
                status="failed",
                score=1,
                max_score=2,
                reason="1 of 2 checks passed.",
                checks=[
                    CheckResult(id="c", status="passed", score=1, max_score=1, visibility="public", reason="holds.")
                ],
            )
        ],
        sandbox=SandboxInfo(tier="A"),
    )
    return json.loads(report_to_json(report))


MALFORMED = [  # refused by both readers: pydantic's for files on disk, the records' own for a worker's text
    (lambda d: d.update(surprise=1), "surprise"),
    (lambda d: d["exercises"][0]["checks"][0].update(reason=""), "needs a reason"),
    (lambda d: d["exercises"][0].update(status="great"), "status"),
    (lambda d: d["exercises"][0]["checks"][0].pop("id"), "id"),
    (lambda d: d["sandbox"].update(depth=3), "depth"),
    (lambda d: d.update(exercises=["not a record"]), "not a report|should be an object"),
]
WRONG_TYPES = [  # a file on disk is checked field by field; a worker's text comes from report_to_json
    (lambda d: d["sandbox"].update(tier=3), "tier"),
    (lambda d: d.update(score="lots"), "score"),
]


@pytest.mark.parametrize("reader", [report_from_json, report_from_worker])
@pytest.mark.parametrize(("change", "complaint"), MALFORMED)
def test_reading_refuses_what_is_not_a_report(reader, change, complaint: str) -> None:
    data = _stored()
    change(data)
    with pytest.raises(ValueError, match=complaint):
        reader(json.dumps(data))


@pytest.mark.parametrize(("change", "complaint"), WRONG_TYPES)
def test_reading_a_file_refuses_fields_of_the_wrong_type(change, complaint: str) -> None:
    data = _stored()
    change(data)
    with pytest.raises(ValueError, match=complaint):
        report_from_json(json.dumps(data))


def test_records_check_what_the_models_checked() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        CheckResult(id="c", status="passed", score=1.0, max_score=1.0, visibility="public", reason="")
    with pytest.raises(ValueError, match="status"):
        ExerciseResult(id="e", status="passed!", score=0.0, max_score=1.0, reason="why")
    result = CheckResult(id="c", status="passed", score=1, max_score=2, visibility="public", reason="holds.")
    assert (result.score, result.max_score) == (1.0, 2.0) and isinstance(result.score, float)


def test_building_and_writing_a_report_imports_no_pydantic() -> None:
    """The point of plain records: a cold ``grader grade`` does not pay for pydantic to report."""
    code = (
        "import sys\n"
        "from grader.report import render\n"
        "from tests.test_report_formats import CASES\n"
        "for case in CASES.values():\n"
        "    for name in ('text', 'json', 'junit', 'gradescope', 'markdown'):\n"
        "        render(case(), name)\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    "text",
    [
        "1e-05 and 1e+16 as text",
        'quotes " and \\ backslashes, a tab\t and a newline\n',
        "\u0000\u001f\u007f controls, \u2028 a line separator, é ☃ 😀",
        "a lone surrogate \ud800 from a learner's output",
        "",
    ],
)
@pytest.mark.parametrize("score", [0.0, 1e-05, 1 / 3, 1e16, 5e-324, 1.7976931348623157e308, 12.5])
def test_json_is_the_standard_librarys_indented_text(text: str, score: float) -> None:
    """Whatever the numbers and the characters, the text is what ``json.dumps(indent=2)`` writes of the same data."""
    reason = text or "why"
    check = CheckResult(id="c", status="failed", score=score, max_score=2, visibility="public", reason=reason, got=text)
    exercise = ExerciseResult(id="e", status="failed", score=score, max_score=2, reason=reason, checks=[check])
    report = Report(grader_version="0.1.0", submission=text, score=score, max_score=2, exercises=[exercise])
    from grader.results import to_data

    expected = json.dumps(to_data(report, exclude_none=True), indent=2, ensure_ascii=False, allow_nan=False)
    assert report_to_json(report) == expected


def test_json_refuses_a_score_json_cannot_hold() -> None:
    report = Report(grader_version="0.1.0", submission="mine.py", score=float("nan"), max_score=1)
    with pytest.raises(ValueError, match="not JSON compliant"):
        report_to_json(report)


def test_the_output_cut_by_check_stays_out_of_the_json_result() -> None:
    """``ExerciseResult.printed`` is for the formats; the contract's JSON keeps ``output`` whole, as before."""
    report = CASES["failed"]()
    before = report_to_json(report)
    report.exercises[0].printed = PrintedOutput(imported="loading\n", checks={"rows-sum-to-one": "z\n"})
    assert report_to_json(report) == before and "loading" not in before
