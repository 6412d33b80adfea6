"""Progress lines for logs, at most one per interval, with counts, time elapsed and left, the learner graded last."""

from __future__ import annotations

import io

import pytest

from grader.batch.progress import PlainProgress, auto_progress


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_prints_periodic_lines_with_time_left() -> None:
    stream, clock = io.StringIO(), _Clock()
    progress = PlainProgress(stream, interval=10, clock=clock)
    progress.start(300, 0)
    for index in range(120):
        clock.now += 0.5
        progress.update(f"l{index}", below_full=index < 14, grader_error=False)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "300 learners; grading 300"
    assert "graded 20/300, 14 below full marks, 10 s elapsed, ~2 min left; last: l19" in lines
    assert len(lines) == 1 + 6 + 1
    assert lines[-1] == "graded 120/300, 14 below full marks, 60 s elapsed, ~90 s left; last: l119"


def test_plain_progress_mentions_reused_and_grader_errors() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream, interval=0)
    progress.start(5, 3)
    progress.update("a", below_full=True, grader_error=True)
    progress.update("b", below_full=False, grader_error=False)
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "5 learners, 3 unchanged since the last run; grading 2",
        "graded 1/2, 1 below full marks, 1 grader error, 0 s elapsed; last: a",
        "graded 2/2, 1 below full marks, 1 grader error, 0 s elapsed; last: b",
    ]


def test_time_left_ignores_the_start_up_before_the_first_learner_finished() -> None:
    # a job of 40 learners that takes 18 s: 10 s to start, then one learner every 0.2 s
    stream, clock = io.StringIO(), _Clock()
    progress = PlainProgress(stream, interval=1, clock=clock)
    progress.start(40, 0)
    clock.now = 10.0
    for index in range(40):
        clock.now += 0.2
        progress.update(f"l{index}", below_full=False, grader_error=False)
    lefts = [line.rsplit("~", 1)[1].split(";")[0] for line in stream.getvalue().splitlines() if "~" in line]
    assert lefts and all(left.endswith(" s left") and int(left.split()[0]) <= 8 for left in lefts), lefts


def test_no_time_left_until_enough_learners_finished() -> None:
    stream, clock = io.StringIO(), _Clock()
    progress = PlainProgress(stream, interval=0, clock=clock)
    progress.start(10, 0)
    for index in range(3):
        clock.now += 30
        progress.update(f"l{index}", below_full=False, grader_error=False)
    lines = stream.getvalue().splitlines()
    assert lines[1:3] == [
        "graded 1/10, 0 below full marks, 30 s elapsed; last: l0",
        "graded 2/10, 0 below full marks, 60 s elapsed; last: l1",
    ]
    assert lines[3] == "graded 3/10, 0 below full marks, 90 s elapsed, ~4 min left; last: l2"  # 7 more at 30 s each


def test_no_time_left_while_every_learner_finished_at_the_same_moment() -> None:
    stream, clock = io.StringIO(), _Clock()
    progress = PlainProgress(stream, interval=0, clock=clock)
    progress.start(10, 0)
    clock.now = 5.0
    for index in range(4):
        progress.update(f"l{index}", below_full=False, grader_error=False)
    assert "left" not in stream.getvalue()


def test_auto_progress_is_plain_when_not_a_terminal() -> None:
    assert isinstance(auto_progress(io.StringIO()), PlainProgress)


def test_progress_goes_to_standard_error_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    progress = auto_progress()  # pytest's captured stderr is not a terminal: plain lines
    progress.start(1, 0)
    progress.update("a", below_full=False, grader_error=False)
    progress.finish()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1].startswith("graded 1/1, 0 below full marks")


def test_plain_progress_quotes_a_learner_s_name_as_inert_text() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream, interval=0)
    progress.start(1, 0)
    progress.update("\x1b[2J\n::error::" + "x" * 200, below_full=False, grader_error=False)
    progress.finish()
    (line,) = stream.getvalue().splitlines()[1:]  # one line: the newline in the name is shown, not written
    assert "\x1b" not in line  # the escape character is written visibly, so no terminal obeys it
    assert len(line) < 160  # the name is cut, saying so


def test_rich_progress_shows_counts_below_full_marks() -> None:
    from grader.batch.progress import RichProgress

    stream = io.StringIO()
    progress = RichProgress(stream)
    progress.start(3, 1)
    progress.update("a", below_full=True, grader_error=False)
    progress.update("b", below_full=False, grader_error=True)
    progress.finish()
    text = stream.getvalue()
    assert "1 of 3 learners unchanged" in text
    assert "2/2" in text and "1 below full marks, 1 grader error " in text
    assert "0:00:0" in text  # elapsed, as h:mm:ss
    assert "last: b" in text
    assert "left" not in text  # two learners cannot tell the pace


def test_rich_progress_shows_a_learner_s_name_as_text_not_markup() -> None:
    from grader.batch.progress import RichProgress

    stream = io.StringIO()
    progress = RichProgress(stream)
    progress.start(1, 0)
    progress.update("[bold]eve[/bold]", below_full=False, grader_error=False)
    progress.finish()
    assert "last: [bold]eve[/bold]" in stream.getvalue()
