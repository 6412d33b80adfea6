"""The report as a notebook shows it: the text report's lines, escaped, with each check's label coloured."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from test_report_formats import CASES

from grader.report.html import format_html
from grader.report.text import format_text


class _Reader(HTMLParser):
    """The tags of a fragment, and its text as a browser shows it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_format_html_shows_the_text_report_and_only_its_own_markup(case: str) -> None:
    report = CASES[case]()
    reader = _Reader()
    reader.feed(format_html(report))
    reader.close()
    assert "".join(reader.text).rstrip("\n") == format_text(report).rstrip("\n")
    assert set(reader.tags) <= {"pre", "b"}  # learner text (a <script>, a <b>) never becomes a tag


def test_format_html_marks_each_check_by_its_status() -> None:
    text = format_html(CASES["failed"]())
    labels = re.findall(r'<b style="color: (#[0-9a-f]{6})">([A-Z]+)</b>', text)
    assert {word for _, word in labels} >= {"PASS", "FAIL"}
    colours = {word: colour for colour, word in labels}
    assert colours["PASS"] != colours["FAIL"]
    assert html.unescape(re.sub(r"<[^>]+>", "", text)).rstrip("\n") == format_text(CASES["failed"]()).rstrip("\n")
