"""No line the grader writes lets learner text command a CI runner.

GitHub Actions obeys a line that starts with ``::`` after white space, and
``##[command]`` anywhere in a line; Azure Pipelines ``##vso[``; GitLab folds
its log at ``section_start:``/``section_end:``; terminals obey escape
sequences. One corpus of such strings is put into every text field of every
result record (found by introspection, so a field added later is covered
too), the report is rendered in every format, and every line of every
output is checked, lines being split wherever any runner or Python splits
them. So are the batch summaries, the progress lines and the one-line
errors on stderr. The formats must still mean the same: JSON and XML decode
back to the learner's text.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.batch.progress import PlainProgress
from grader.batch.summary import class_stats, format_summary_markdown, format_summary_text
from grader.cli import main
from grader.report import FORMATS, render
from grader.report._common import printable
from grader.report.gradescope import format_gradescope
from grader.report.runner_safe import inert_line, inert_lines
from grader.results import CheckResult, ExerciseResult, Report, SandboxInfo, report_from_json, to_data

ROOT = Path(__file__).resolve().parents[1]

CORPUS = {
    "error": "::error title=Grader::Full marks, well done",
    "add-mask": "::add-mask::secret",
    "stop-commands": "::stop-commands::pause",
    "set-output": "::set-output name=score::5",
    "spaces": "   ::warning::after spaces",
    "tab": "\t::notice::after a tab",
    "unicode-spaces": "\u3000\xa0\u2003::error::after unicode spaces",
    "zero-width": "\u200b\ufeff::error::after zero-width characters",
    "newline": "text\n::error::after a newline",
    "cr": "text\r::error::after a carriage return",
    "crlf": "text\r\n  ::error::after crlf",
    "line-separators": "a\u2028::error::b\u2029::error::c\x85::error::d",
    "form-feeds": "a\x0b::error::b\x0c::error::c\x1c::error::d\x1e::error::",
    "legacy-command": "##[error]legacy command",
    "legacy-mid-line": "all passed ##[add-mask]secret ##[set-output name=x;]1",
    "legacy-triple": "###[error]x",
    "azure": "##vso[task.setvariable variable=score]100 ##VSO[task.complete result=Succeeded;]",
    "gitlab-start": "section_start:1700000000:grades[collapsed=true]\r\x1b[0Kfolded",
    "gitlab-end": "\x1b[0Ksection_end:1700000000:grades\r\x1b[0K",
    "gitlab-upper": "SECTION_START:1:x",
    "ansi": "\x1b[2K\r::error::after clearing the line",
    "osc-link": "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "c1-csi": "\x9b31mred\x9b0m",
    "colons-only": "::",
    "many": " ".join(["::e::x"] * 40),
}
IDS = list(CORPUS)

_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LEAD = re.compile(r"^[\s\u200b-\u200d\u2060\ufeff]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_runner_inert(output: str) -> None:
    """No line of ``output`` is one a CI runner or a terminal would act on."""
    assert not _CONTROL.search(output), repr(_CONTROL.search(output))
    for line in _BREAK.split(output):
        assert not _LEAD.sub("", line).startswith("::"), line
        assert "##[" not in line, line
        assert not re.search(r"##vso\[", line, re.IGNORECASE), line
        assert not re.search(r"section_(?:start|end):", line, re.IGNORECASE), line


# The only lines the github format writes: the grader's own workflow commands, escaped properties, one line each.
_GRADER_COMMAND = re.compile(r"::(?:error|warning|notice) (?:file=[^:,]*,)?title=[^:,]*::(?P<message>.*)")


def assert_runner_reads_only_grader_commands(output: str) -> None:
    """Every line of the github format is one of the grader's commands; the message in it is inert text."""
    assert output.endswith("\n") and not _CONTROL.search(output), repr(output[-20:])
    for line in output[:-1].split("\n"):
        command = _GRADER_COMMAND.fullmatch(line)
        assert command, line
        assert not _BREAK.search(line), line
        assert_runner_inert(command["message"])


def assert_output_safe(format_name: str, output: str) -> None:
    """The check each format answers to: its lines obey nothing, or (github) only the grader's own commands."""
    if format_name == "github":
        assert_runner_reads_only_grader_commands(output)
    else:
        assert_runner_inert(output)


_ENUMERATED = {"status", "visibility"}


def _filled(record: type, text: str, **given: Any) -> Any:
    """A ``record`` whose every text field (and list of texts) holds ``text``, besides the fields ``given``."""
    values: dict[str, Any] = {}
    for item in fields(record):
        if item.name in given or item.name in _ENUMERATED:
            continue
        if item.type in ("str", "str | None"):
            values[item.name] = text
        elif item.type in ("list[str]", "list[str] | None"):
            values[item.name] = [text, f"more {text}"]
        elif item.type == "dict[str, str] | None":
            values[item.name] = {text: text}
    return record(**values, **given)


def _check(text: str, status: str, **given: Any) -> CheckResult:
    points = {"score": 1.0 if status == "passed" else 0.0, "max_score": 1.0}
    return _filled(CheckResult, text, status=status, visibility=given.pop("visibility", "public"), **points, **given)


def hostile_reports(text: str) -> list[Report]:
    """Reports holding ``text`` in every text field, through every branch a format has."""
    checks = [
        _check(text, "failed", more_failures=2),
        _check(text, "failed", visibility="hidden", input=None),
        _check(text, "passed"),
        _check(text, "error", input=None),
        _check(text, "timeout", visibility="after_due_date"),
        _check(text, "skipped", visibility="after_published"),
    ]
    implementation = _filled(ExerciseResult, text, status="failed", score=1.0, max_score=6.0, checks=checks)
    missing = _filled(ExerciseResult, text, status="missing", score=0.0, max_score=2.0, checks=[])
    quiz = _filled(
        ExerciseResult, text, kind="quiz", status="failed", score=0.0, max_score=1.0, checks=[_check(text, "failed")]
    )
    stopped = _filled(
        ExerciseResult,
        text,
        status="error",
        score=0.0,
        max_score=2.0,
        checks=[_check(text, "error", input=None), _check(text, "error", input=None)],
    )
    sandbox = _filled(SandboxInfo, text)
    whole = _filled(Report, text, score=1.0, max_score=11.0, exercises=[implementation, missing, quiz, stopped])
    whole.sandbox = sandbox
    nothing = _filled(Report, text, score=0.0, max_score=2.0, exercises=[stopped])
    empty = _filled(Report, text, score=0.0, max_score=0.0, exercises=[])
    return [whole, nothing, empty]


def _texts(text: str) -> list[str]:
    return [text, f"lead {text}", ("word " * 18 + text + " ") * 3]  # alone, after words, and wrapped


def _every_output(report: Report) -> dict[str, str]:
    outputs = {name: render(report, name) for name in FORMATS}
    hidden_as = {exercise.id: "hidden" for exercise in report.exercises}
    outputs["gradescope-hidden"] = format_gradescope(report, hidden_as=hidden_as)
    return outputs


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_no_format_starts_a_runner_command_with_learner_text(name: str) -> None:
    for text in _texts(CORPUS[name]):
        for report in hostile_reports(text):
            for format_name, output in _every_output(report).items():
                try:
                    assert_output_safe(format_name, output)
                except AssertionError as error:
                    raise AssertionError(f"{format_name}: {error}") from None


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_json_and_xml_still_decode_to_the_learner_text(name: str) -> None:
    text = CORPUS[name]
    report = hostile_reports(text)[0]
    assert json.loads(render(report, "json")) == json.loads(json.dumps(to_data(report, exclude_none=True)))
    assert report_from_json(render(report, "json")) == report
    for format_name in ("gradescope", "exercism", "prairielearn"):
        assert printable(text) in _strings(json.loads(render(report, format_name)))
    suites = ET.fromstring(render(report, "junit").encode("utf-8"))
    reasons = {element.get("message") for element in suites.iter() if element.get("message") is not None}
    assert printable(text) in reasons


def _strings(data: Any) -> list[str]:
    """Every string a decoded JSON document holds."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [text for value in data.values() for text in _strings(value)]
    if isinstance(data, list):
        return [text for value in data for text in _strings(value)]
    return []


def test_text_shows_an_escaped_line_start_visibly() -> None:
    report = hostile_reports(CORPUS["add-mask"])[0]
    text = render(report, "text")
    assert "\\x3a:add-mask::secret" in text
    assert "\\x3a:add-mask::secret" in render(report, "markdown")


# Each example renders every format of two reports: a time limit would fail on a loaded machine, not on output.
@settings(deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [":", "::", "#", "##", "[", "vso[", "section_start", "section_end", ":1:x", " ", "\t", "\u3000", "\u200b"]
            + ["\n", "\r", "\r\n", "\u2028", "\x85", "\x0b", "\x1b", "\x9b", "a", "word ", "error", "add-mask"]
        ),
        min_size=1,
        max_size=40,
    ).map("".join)
)
def test_any_text_from_runner_fragments_is_inert_in_every_format(text: str) -> None:
    for report in hostile_reports(text)[:2]:
        for format_name, output in _every_output(report).items():
            assert_output_safe(format_name, output)


@pytest.mark.parametrize(
    ("text", "syntax", "expected"),
    [
        ("::error::x", "text", "\\x3a:error::x"),
        ("  ::error::x", "json", "  \\u003a:error::x"),
        ("a\n\t::error::x", "xml", "a\n\t&#58;:error::x"),
        ("a ##[error]b", "text", "a #\\x23[error]b"),
        ("a ##vso[x]b", "json", "a #\\u0023vso[x]b"),
        ("section_end:1:x", "xml", "section_end&#58;1:x"),
        ("a\r::b::c", "text", "a\\x0d::b::c"),
        ("a\u2028b", "json", "a\\u2028b"),
        ("a::b:: ## [x] section start:", "text", "a::b:: ## [x] section start:"),
    ],
    ids=["text", "json-after-spaces", "xml-after-tab", "legacy", "azure", "gitlab", "cr", "separator", "harmless"],
)
def test_inert_lines_escapes_only_runner_sequences(text: str, syntax: Any, expected: str) -> None:
    assert inert_lines(text, syntax) == expected
    assert inert_lines(expected, syntax) == expected  # a second pass changes nothing


# --- batch: summaries and progress lines ------------------------------------------------------------


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_batch_summaries_and_progress_lines_are_inert(name: str) -> None:
    text = CORPUS[name]
    report = hostile_reports(text)[0]
    reports = {f"learner {text}": report, text: hostile_reports(text)[1]}
    checks = [(exercise.id, check.id) for exercise in report.exercises for check in exercise.checks]
    stats = class_stats(reports, checks, report.max_score, grader_errors=[text], notes=[text, f"note {text}"])
    assert_runner_inert(format_summary_markdown(stats, title=text))
    assert_runner_inert(format_summary_text(stats))

    class Stream:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, piece: str) -> None:
            self.lines.append(piece)

        def flush(self) -> None:
            pass

    stream = Stream()
    progress = PlainProgress(stream, interval=0.0)  # type: ignore[arg-type]
    progress.start(3, 0)
    progress.update(text, below_full=True, grader_error=True)
    progress._say(f"learner {text}")  # a line naming a learner, should one ever be written
    progress.finish()
    assert_runner_inert("".join(stream.lines))


# --- stderr ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_one_line_errors_stay_one_inert_line(name: str) -> None:
    line = inert_line(f"{CORPUS[name]}.py: no such file or directory")
    assert "\n" not in line
    assert_runner_inert(line + "\n")


def test_grade_refuses_a_hostile_path_in_one_inert_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["grade", str(tmp_path / "x\r::error::y\n::add-mask::z.py")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("grader: error: ")
    assert_runner_inert(result.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("format_name", ["text", "markdown"], ids=["text", "markdown"])
def test_live_grade_keeps_a_hostile_learner_out_of_the_runner(tmp_path: Path, format_name: str) -> None:
    """The issue's learner: an exception message and printed lines that start workflow commands."""
    (tmp_path / "softmax.py").write_text(
        "import os, sys\n"
        "print('::add-mask::secret\\n  ::warning::spaced\\r::error::cr ##[error]mid section_start:1:x')\n"
        "os.write(1, b'\\n::error::fd1\\n')\n"
        "os.write(2, b'\\n::error::fd2\\n')\n"
        "sys.stderr.write('\\n::error::stderr\\n')\n"
        "def softmax(z, axis=-1):\n"
        "    raise ValueError('word ' * 15 + '::error title=Grader::Full marks ' + '::e::x ' * 30 + '\\r::e::cr')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", str(tmp_path / "softmax.py")]
        + ["--exercise", "stable-softmax", "--format", format_name],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "add-mask" in done.stdout and "Full marks" in done.stdout  # shown, but inert
    assert_runner_inert(done.stdout)
    assert_runner_inert(done.stderr)
