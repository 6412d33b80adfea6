"""``grader.check`` in process: the kernel's cells graded on a handout's public checks, shown as HTML or text.

The kernel is a real IPython shell in this process (its history kept in
memory); the learner's code still runs in learner processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from batch_helpers import notebook
from test_release import build_project

import grader
from grader.authoring.release import release_handout
from grader.errors import UsageError
from grader.jupyter.check import KERNEL_MODULE, find_public_checks, kernel_submission
from grader.jupyter.kernel import CellOutcomes, kernel_cells, notebook_path, watch_cells
from grader.report.text import format_text
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]
CORRECT = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_text(encoding="utf-8")
BUGGY = (ROOT / "solutions" / "stable-softmax" / "wrong_no_max_shift.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("handout")
    release_handout(load_catalog(build_project(base)), out=base / "handout")
    return base / "handout"


@pytest.fixture()
def shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A real IPython shell, its history in memory, ended after the test."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    instance = InteractiveShell.instance(config=config)
    try:
        yield instance
    finally:
        InteractiveShell.clear_instance()


def _fake_shell(*inputs: str, **user_ns: object) -> SimpleNamespace:
    return SimpleNamespace(history_manager=SimpleNamespace(input_hist_raw=["", *inputs]), user_ns=user_ns)


def _run(shell, source: str) -> None:
    result = shell.run_cell(source, store_history=True)
    assert result.success, result.error_in_exec or result.error_before_exec


@pytest.mark.slow
def test_check_grades_the_function_as_the_kernel_holds_it(shell, handout: Path, monkeypatch) -> None:
    monkeypatch.chdir(handout)
    watch_cells(shell)  # what a first ``import grader`` in the kernel does
    _run(shell, BUGGY)
    _run(shell, "import grader\nfirst = grader.check('stable-softmax')")
    # redefined in the kernel (the saved file is not involved), in a cell that then raised
    assert not shell.run_cell(f"{CORRECT}\nsoftmax(no_such_name)", store_history=True).success
    _run(shell, "second = grader.check('stable-softmax')")
    first, second = shell.user_ns["first"].report, shell.user_ns["second"].report
    assert 0 < first.max_score == second.max_score
    assert first.score < first.max_score and second.score == second.max_score
    assert first.public_only and all(c.visibility == "public" for c in first.exercises[0].checks)
    assert (
        second.problems[0]
        == "Graded the code this kernel ran: 4 cells (In [1] to In [4]), as and in the order it ran them."
    )
    left_out = "this kernel: cells that only import or call the grader were left out: In [2], In [4]."
    assert second.problems[-2] == left_out
    assert second.problems[-1].startswith("this kernel: In [3] raised an exception when it ran, so it runs here")
    data, _ = shell.display_formatter.format(shell.user_ns["second"])
    assert data["text/plain"] == format_text(second).rstrip("\n")
    assert f"Total: {second.score:g}/{second.max_score:g}" in data["text/html"]
    assert data["text/html"].startswith("<pre")


@pytest.mark.slow
def test_check_grades_a_saved_file_when_named_and_says_so(handout: Path, tmp_path: Path) -> None:
    work = handout / "mine.ipynb"
    work.write_text(notebook(("code", CORRECT), ("code", "import grader\ngrader.check('stable-softmax')")))
    view = grader.check("stable-softmax", file=work)  # no kernel here: the file, with public-checks beside it
    assert view.report.problems[0] == "Graded the file mine.ipynb as it is saved."
    assert view.report.score == view.report.max_score > 0
    assert str(view) == format_text(view.report)


def test_check_of_a_quiz_or_an_unknown_id_says_so_in_a_line(handout: Path, tmp_path: Path) -> None:
    work = tmp_path / "work.py"
    work.write_text(CORRECT)
    with pytest.raises(UsageError, match=r"'why-softmax-quiz' is a quiz: .* answers.yaml") as raised:
        grader.check("why-softmax-quiz", file=work, exercises_dir=handout)
    assert "\n" not in str(raised.value)
    with pytest.raises(UsageError, match=r"unknown exercise 'stable-softmx'; did you mean 'stable-softmax'\?"):
        grader.check("stable-softmx", file=work, exercises_dir=handout)


def test_check_outside_a_notebook_needs_a_file() -> None:
    with pytest.raises(UsageError, match=r"none runs here; pass file='your_file.py'") as raised:
        grader.check("stable-softmax")
    assert "\n" not in str(raised.value)


def test_find_public_checks_looks_beside_the_notebook_then_here(tmp_path: Path, monkeypatch) -> None:
    beside = tmp_path / "course" / "week1"
    (beside / "public-checks").mkdir(parents=True)
    here = tmp_path / "here"
    (here / "public-checks").mkdir(parents=True)
    monkeypatch.chdir(here)
    assert find_public_checks(beside=beside / "work.ipynb") == beside / "public-checks"
    assert find_public_checks(beside=tmp_path / "elsewhere.ipynb").resolve() == here / "public-checks"
    assert find_public_checks(tmp_path / "course" / "week1") == beside / "public-checks"  # the handout folder
    assert find_public_checks(beside / "public-checks") == beside / "public-checks"


def test_find_public_checks_says_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as raised:
        find_public_checks(beside=tmp_path / "nb" / "work.ipynb")
    message = str(raised.value)
    assert f"beside the notebook ({tmp_path / 'nb'})" in message and f"working directory ({tmp_path})" in message
    assert "exercises_dir=" in message and "\n" not in message
    with pytest.raises(UsageError, match="no such folder"):
        find_public_checks(tmp_path / "missing")


def test_kernel_submission_is_the_cells_run_without_the_grader_ones() -> None:
    fake = _fake_shell(
        "import numpy as np\n%timeit 1", "", "import grader", "def softmax(z):\n    return z", "grader.check('x')"
    )
    submission = kernel_submission(fake)
    source = submission.python[KERNEL_MODULE].decode()
    assert "# In [1]" in source and "# In [4]" in source and "In [3]" not in source and "In [5]" not in source
    assert "%timeit" not in source and "grader" not in source.replace("removed by the grader", "")
    assert (
        submission.notes[0]
        == "Graded the code this kernel ran: 4 cells (In [1] to In [5]), as and in the order it ran them."
    )
    assert any("were left out: In [3], In [5]." in note for note in submission.notes)


def test_kernel_cells_of_a_kernel_that_ran_nothing() -> None:
    cells = kernel_cells(_fake_shell())
    assert cells.cells == [] and cells.describe() == "Graded the code this kernel ran: it has run no code cell yet."
    assert kernel_cells(object()).cells == []


def test_notebook_path_is_the_front_ends_when_it_exists(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "work.ipynb"
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook_path(_fake_shell(__vsc_ipynb_file__=str(work))) is None  # not there: not trusted
    work.write_text("{}")
    assert notebook_path(_fake_shell(__vsc_ipynb_file__=str(work))) == work
    monkeypatch.setenv("JPY_SESSION_NAME", str(work))
    assert notebook_path(_fake_shell()) == work


def test_watch_cells_registers_once_and_records_the_cells_that_raised(shell) -> None:
    outcomes = watch_cells(shell)
    assert isinstance(outcomes, CellOutcomes) and watch_cells(shell) is outcomes
    _run(shell, "x = 1")
    shell.run_cell("x +", store_history=True)  # a syntax error
    shell.run_cell("1 / 0", store_history=True)
    _run(shell, "y = 2")
    assert outcomes.raised == {2, 3}
    assert kernel_cells(shell).raised == {"In [2]", "In [3]"}
    assert watch_cells(object()) is None
