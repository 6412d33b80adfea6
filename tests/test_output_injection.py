"""Learner text in the files the grader writes for people stays text: CSV, Markdown, HTML, Gradescope.

A learner chooses folder and file names, exception messages, printed output
and quiz answers, and all of them reach ``gradebook.csv``, ``summary.md``,
``feedback/*.md``, ``report.html`` and ``results.json``. One corpus of
injection strings (links, images, every GFM autolink form, raw HTML, block
starts, tables, code, emphasis, entities, line separators, formula starts)
is put wherever learner text goes. Markdown is rendered with markdown-it
(CommonMark with GFM tables and strikethrough, as GitHub renders them) and
must have exactly the structure it has with a harmless placeholder in the
same places, show the learner text literally, and hold no text a renderer
would autolink (GitHub links ``https://``, ``www.`` and e-mail addresses in
the rendered text, after escapes are undone).
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, make_exercises
from hypothesis import example, given
from hypothesis import strategies as st

from grader.batch import run_batch
from grader.batch.gradebook import GradebookRow, format_gradebook, inert_cell
from grader.batch.html import format_report_html
from grader.batch.summary import class_stats, first_sentence, format_summary_markdown
from grader.report._common import printable
from grader.report.gradescope import format_gradescope
from grader.report.markdown import format_markdown
from grader.report.markdown_safe import markdown_code, markdown_text
from grader.results import CheckResult, ExerciseResult, Report, SandboxInfo

markdown_it = pytest.importorskip("markdown_it")
# Escaped characters stay tokens of their own (text_join off), as they are when linkify runs.
MD = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("text_join")

INJECTIONS = {
    "link": "[Grades moved](https://evil.example)",
    "image": "![](https://evil.example/x.png)",
    "both": "[Grades moved](https://evil.example) ![](https://evil.example/x.png)",
    "reference-link": "[Grades moved][1]\n\n[1]: https://evil.example",
    "angle-autolink": "<https://evil.example/x.png>",
    "angle-email": "<grades@evil.example>",
    "bare-url": "see https://evil.example/x.png now",
    "bare-url-in-parens": "(https://evil.example)",
    "bare-domain": "grades moved to evil.com/x.png",
    "upper-case-url": "HTTPS://EVIL.EXAMPLE",
    "ftp-url": "ftp://evil.example/x",
    "protocol-relative": "//evil.example/x.png",
    "www": "www.evil.example/x",
    "www-after-underscore": "_www.evil.example_",
    "email": "write to grades@evil.example",
    "mailto": "mailto:grades@evil.example",
    "mention": "@instructor",
    "javascript": "[x](javascript:alert(1))",
    "raw-html": "<img src=https://evil.example/x.png>",
    "script": "<script>alert(1)</script>",
    "html-block": "<div>\n*x*\n</div>",
    "html-comment": "<!-- hidden -->",
    "heading": "# Grades moved",
    "setext": "Grades moved\n===",
    "thematic-break": "***",
    "bullet": "- item",
    "plus-list": "+ item",
    "ordered": "1. item",
    "ordered-paren": "2) item",
    "blockquote": "> quoted",
    "table": "| a | b |\n|---|---|\n| c | d |",
    "pipes": "a | b \\| c",
    "fence": "```\ncode\n```",
    "tilde-fence": "~~~\ncode",
    "indented-code": "\n    code",
    "code-span": "`x` ``y`` ```",
    "emphasis": "*a* **b** _c_ __d__ ~~e~~",
    "footnote": "[^1]\n\n[^1]: https://evil.example",
    "entities": "&lt;b&gt; &#60;i&#62; &amp; &copy;",
    "math": "$x$ $$y$$",
    "trailing-backslash": "a\\",
    "hard-break": "a  \nb\\\nc",
    "cr": "a\r# b",
    "crlf": "a\r\n# b",
    "line-separator": "a\u2028# b\u2029- c",
    "vertical-tab": "a\x0b# b\x0c> c",
    "file-separators": "a\x1c# b\x1d\x1e\x85c",
    "ansi": "\x1b[31mred\x1b[0m",
    "bidi": "\u202eevil",
    "url-with-pipe-and-backticks": "https://evil.example/a|b ``x``",
}
IDS = list(INJECTIONS)
PLACEHOLDER = "placeholder"
_AUTOLINKABLE = re.compile(r"(?:https?|ftp)://|www\.|[\w.+-]+@[\w-]+\.\w|(?:mailto|xmpp):|//[^\s/]", re.IGNORECASE)
_DOMAIN = re.compile(r"[^\W_]\.[^\W\d_]")  # what linkify's fuzzy links need within one text token


def _shape(markdown: str) -> list[tuple[str, str]]:
    """Every markup token of the rendered document: blocks, and inline markup other than text and code."""
    shape = []
    for token in MD.parse(markdown):
        shape.append((token.type, token.tag if not token.type.startswith("html") else token.content))
        for child in token.children or []:
            if child.type not in ("text", "text_special", "code_inline", "softbreak"):
                shape.append((child.type, child.content if child.type.startswith("html") else child.tag))
    return shape


def _texts(markdown: str) -> list[tuple[str, str, list[str]]]:
    """Per inline run: the text as shown, the text outside code spans, and its text tokens one by one."""
    runs = []
    for token in MD.parse(markdown):
        if token.type == "inline":
            children = token.children or []
            shown = "".join(c.content if c.type != "softbreak" else " " for c in children)
            prose = "".join(c.content if c.type in ("text", "text_special") else "\0" for c in children)
            runs.append((shown, prose, [c.content for c in children if c.type == "text"]))
    return runs


def _assert_inert(with_text: str, with_placeholder: str, shown: list[str]) -> None:
    assert _shape(with_text) == _shape(with_placeholder)
    html = MD.render(with_text)
    assert "<a " not in html and "<img" not in html
    runs = _texts(with_text)
    for _, prose, tokens in runs:
        assert not _AUTOLINKABLE.search(prose), prose
        assert not any(_DOMAIN.search(token) for token in tokens), tokens
    for text in shown:
        assert any(text in run for run, _, _ in runs), text


def _one_line(text: str) -> str:
    return " ".join(printable(text).split())


# --- Markdown: feedback and --format markdown -------------------------------------------------------


def _feedback(text: str) -> Report:
    failing = CheckResult(
        id="rows-sum-to-one",
        status="failed",
        score=0.0,
        max_score=1.0,
        visibility="hidden",
        reason=f"Failed: {text}",
        property=f"the weights sum to 1 ({text})",
        input=f"softmax(z={text})",
        expected=f"sums of 1 {text}",
        got=f"softmax raised {text}",
        note=f"note {text}",
        hint=f"hint {text}",
        more_failures=2,
    )
    erring = CheckResult(
        id="non-negative",
        status="error",
        score=0.0,
        max_score=1.0,
        visibility="public",
        reason=f"Not run: importing your file raised Exception: {text}",
    )
    passing = CheckResult(
        id="finite", status="passed", score=1.0, max_score=1.0, visibility="public", reason=f"passed {text}"
    )
    diagnosed = CheckResult(
        id="shift",
        status="failed",
        score=0.0,
        max_score=1.0,
        visibility="public",
        reason="r",
        property="p",
        input="i",
        expected="e",
        got="g",
        diagnosis=f"mistake {text}",
    )
    exercise = ExerciseResult(
        id="stable-softmax",
        title=f"Title {text}",
        status="failed",
        score=1.0,
        max_score=4.0,
        reason=f"Importing raised {text}",
        checks=[failing, erring, passing, diagnosed],
        output=f"printed {text}\nmore",
    )
    return Report(
        grader_version="0",
        submission=f"class/{text}.py",
        score=1.0,
        max_score=4.0,
        exercises=[exercise],
        problems=[f"Note {text}"],
        sandbox=SandboxInfo(tier="C", warning=f"warning {text}"),
    )


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_feedback_markdown_shows_learner_text_as_text(name: str) -> None:
    text = INJECTIONS[name]
    shown = [
        _one_line(f"Importing raised {text}"),
        _one_line(f"softmax raised {text}"),
        _one_line(f"Title {text}"),
        _one_line(f"class/{text}.py"),
        _one_line(f"Note {text}"),
    ]
    _assert_inert(format_markdown(_feedback(text)), format_markdown(_feedback(PLACEHOLDER)), shown)


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_markdown_text_is_inert_alone_and_as_a_list_item(name: str) -> None:
    text = INJECTIONS[name]
    for template in ("{}", "- {}", "> {}", "# {}"):
        _assert_inert(
            template.format(markdown_text(text)), template.format(markdown_text(PLACEHOLDER)), [_one_line(text)]
        )


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_markdown_text_and_code_keep_a_table_row_whole(name: str) -> None:
    text = INJECTIONS[name]
    head = "| a | b | c |\n|---|---|---|\n"
    row = "| {} | {} | x |\n"
    document = head + row.format(markdown_text(text, table=True), markdown_code(text, table=True))
    placeholder = head + row.format(markdown_text(PLACEHOLDER, table=True), markdown_code(PLACEHOLDER, table=True))
    _assert_inert(document, placeholder, [_one_line(text)])
    cells = [run for run, _, _ in _texts(document)][3:]
    assert cells == [_one_line(text), _one_line(text), "x"]


def test_markdown_text_keeps_ordinary_sentences_as_they_were() -> None:
    ordinary = (
        "softmax raised ZeroDivisionError: division by zero (line 4: return 1 / 0). "
        "Expected sums of 1 along axis -1 (atol 1e-09); got 0.5 for Q @ K."
    )
    assert markdown_text(ordinary) == ordinary
    assert markdown_text("- 1 more") == "\\- 1 more" and markdown_text("12. x") == "12\\. x"
    assert markdown_text("mine.py line 4, e.sum()") == "mine\\.py line 4, e\\.sum()"


@pytest.mark.parametrize(
    "text",
    ["https://evil.example", "www.evil.example", "a@evil.example", "//evil.example", "mailto:a@b.c"],
    ids=["url", "www", "email", "protocol-relative", "mailto"],
)
def test_markdown_text_shows_what_a_renderer_would_link_as_code(text: str) -> None:
    assert markdown_text(f"see {text} now") == f"`see {text} now`"


# --- Markdown: summary.md -----------------------------------------------------------------------------


def _class_with(text: str) -> tuple[dict[str, Report], list[str], list[str]]:
    def report(reason: str) -> Report:
        check = CheckResult(id="finite", status="error", score=0.0, max_score=1.0, visibility="public", reason=reason)
        exercise = ExerciseResult(id="impl", status="error", score=0.0, max_score=1.0, reason=reason, checks=[check])
        return Report(grader_version="0", submission="x", score=0.0, max_score=1.0, exercises=[exercise])

    reports = {
        f"learner {text}": report(f"Not run: importing your file raised Exception: {text}"),
        "other": report(f"Not run: importing your file raised Exception: {text}"),
    }
    return reports, [f"learner {text}"], [f"skipped {text!r}: hidden files are not learners", f"note {text}"]


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_summary_markdown_shows_learner_text_as_text(name: str) -> None:
    def summary(text: str) -> str:
        reports, errors, notes = _class_with(text)
        stats = class_stats(reports, [("impl", "finite")], 1.0, grader_errors=errors, notes=notes)
        return format_summary_markdown(stats, title=f"Assignment {text}")

    text = INJECTIONS[name]
    reason = first_sentence(f"Not run: importing your file raised Exception: {text}")
    shown = [
        _one_line(reason),
        _one_line(f"learner {text}"),
        _one_line(f"note {text}"),
        _one_line(f"Assignment {text}"),
    ]
    _assert_inert(summary(text), summary(PLACEHOLDER), shown)


# --- report.html ----------------------------------------------------------------------------------------


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_report_html_escapes_learner_text(name: str) -> None:
    def page(text: str) -> _Page:
        reports, errors, notes = _class_with(text)
        stats = class_stats(reports, [("impl", "finite")], 1.0, notes=notes)
        parsed = _Page()
        parsed.feed(format_report_html(stats, title=f"Assignment {text}"))
        return parsed

    text = INJECTIONS[name]
    with_text, with_placeholder = page(text), page(PLACEHOLDER)
    assert with_text.tags == with_placeholder.tags
    shown = "".join(with_text.text)
    assert f"Assignment {text}" in shown
    assert first_sentence(f"Not run: importing your file raised Exception: {text}") in shown


# --- Gradescope ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_gradescope_shows_every_output_as_plain_text(name: str) -> None:
    text = INJECTIONS[name]
    results = json.loads(format_gradescope(_feedback(text)))
    assert (results["output_format"], results["test_output_format"], results["test_name_format"]) == (
        "text",
        "text",
        "text",
    )
    assert "\x1b" not in json.dumps(results, ensure_ascii=False)
    outputs = [test["output"] for test in results["tests"]]
    assert printable(f"Not run: importing your file raised Exception: {text}") in outputs


# --- gradebook.csv -------------------------------------------------------------------------------------

_LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_FORMULA = "=+-@\t\r"


def _report(score: float) -> Report:
    exercise = ExerciseResult(id="impl", status="failed", score=score, max_score=2.0, reason="r", checks=[])
    return Report(grader_version="0", submission="x", score=score, max_score=2.0, exercises=[exercise])


def _assert_gradebook_inert(names: list[str]) -> list[list[str]]:
    text = format_gradebook([GradebookRow(name, _report(1.5)) for name in names], ["impl"])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(set(names)) + 1 and all(len(row) == 5 for row in rows)  # impl, then impl:status
    assert len(text.splitlines()) == len(rows)  # every line separator a spreadsheet knows is gone too
    for row in rows[1:]:
        learner, *scores = row
        assert not any(ch in learner for ch in _LINE_BREAKS)
        first = re.sub(r"^[\s\u200b-\u200d\u2060]+", "", learner)[:1]
        assert not first or unicodedata.normalize("NFKC", first)[:1] not in _FORMULA + "\u2212"
        assert scores == ["1.5", "2", "1.5", "failed"]
    return rows


@pytest.mark.parametrize("name", IDS, ids=IDS)
def test_gradebook_keeps_injection_names_to_one_inert_row(name: str) -> None:
    _assert_gradebook_inert([INJECTIONS[name], "ann"])


def test_gradebook_neutralises_formulas_behind_line_breaks_and_spaces() -> None:
    names = [
        "zed\r=2*21",
        "zed\n=2*21",
        "zed\r\n@SUM(A1)",
        "a\u2028+1",
        "a\x0b-1",
        "  =1+1",
        "\u3000=1",
        "\uff1d1+1",
        "\u22121",
        "\u200d=1",
        "\t=1",
        '=HYPERLINK("http://x","y")',
        "-2+3",
        "ann-marie",
        "o'neil",
        'é, "x"',
    ]
    cells = [row[0] for row in _assert_gradebook_inert(names)[1:]]
    assert "zed\\x0d=2*21" in cells and "zed\\x0a=2*21" in cells and "a\\u2028+1" in cells
    assert {"'  =1+1", "'\u3000=1", "'\uff1d1+1", "'\u22121", "'-2+3", "\\x09=1"} <= set(cells)
    assert {"ann-marie", "o'neil", 'é, "x"'} <= set(cells)


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6, unique=True))
@example(["zed\r=2*21", "zed\n=2*21"])
def test_gradebook_any_names_give_one_inert_row_each(names: list[str]) -> None:
    _assert_gradebook_inert(names)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ann", "ann"),
        ("=1", "'=1"),
        ("zed\r=2*21", "zed\\x0d=2*21"),
        ("  +1", "'  +1"),
        ("\u202eevil", "\\u202eevil"),
    ],
    ids=["plain", "formula", "carriage-return", "spaces-then-plus", "bidi-override"],
)
def test_inert_cell(text: str, expected: str) -> None:
    assert inert_cell(text) == expected


# --- live: grader batch -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_batch_outputs_keep_hostile_learners_inert(tmp_path: Path) -> None:
    """The issue's two learners: a folder named ``zed\\r=2*21`` and a file raising a Markdown link at import."""
    folder = tmp_path / "class"
    (folder / "zed\r=2*21").mkdir(parents=True)
    (folder / "zed\r=2*21" / "softmax.py").write_text("def softmax(z, axis=-1):\n    return z\n")
    (folder / "evil").mkdir()
    message = INJECTIONS["both"]
    (folder / "evil" / "softmax.py").write_text(f"raise Exception({message!r})\n")
    out = tmp_path / "out"
    run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=make_exercises(tmp_path))
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert [row[0] for row in rows[1:]] == ["evil", "zed\\x0d=2*21"]
    names = {json.loads(path.read_text(encoding="utf-8"))["submission"] for path in (out / "results").glob("*.json")}
    assert any("zed\r=2*21" in name for name in names)
    for markdown in [out / "summary.md", *(out / "feedback").glob("*.md")]:
        html = MD.render(markdown.read_text(encoding="utf-8"))
        assert "<a " not in html and "<img" not in html
        for _, prose, tokens in _texts(markdown.read_text(encoding="utf-8")):
            assert not _AUTOLINKABLE.search(prose) and not any(_DOMAIN.search(token) for token in tokens)
    assert "[Grades moved](https://evil.example)" in (out / "feedback" / "evil.md").read_text(encoding="utf-8")
