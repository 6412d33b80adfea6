"""A notebook's cells that only import or call the grader are left out of what is graded, never scored as 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_helpers import notebook

from grader.results import to_data
from grader.submission.grader_cells import MAX_NAMES, MAX_PARSED_CELL, MAX_PARSED_TOTAL, PLACEHOLDER, GraderCells
from grader.submission.notebook import convert_cells, convert_notebook

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "stable-softmax"
SOFTMAX = "def softmax(z, axis=-1):\n    return z"


def _verdicts(*cells: str) -> list[tuple[str, str]]:
    """``(kind, kept source)`` of each cell, judged in order by one reader."""
    reader = GraderCells()
    return [(verdict.kind, verdict.source) for verdict in map(reader.judge, cells)]


@pytest.mark.parametrize(
    ("cells", "kinds"),
    [
        (["import grader", "grader.check('stable-softmax')"], ["grader", "grader"]),
        (["import grader as g\ng.check('a')\nprint(g.check('b'))"], ["grader"]),
        (["from grader import check", "check('a')", "check(\n    'b',\n)"], ["grader", "grader", "grader"]),
        (["from grader.jupyter.check import check as c", "c('a')"], ["grader", "grader"]),
        (["from grader import *", "check('a')"], ["grader", "grader"]),
        (["import grader", "result = grader.check('a')", "result", "print(result.report.score)"], ["grader"] * 4),
        (["import numpy as np", "x = np.ones(3)  # not the grader's"], ["code", "code"]),
        (["from grader import check", "check = print", "check('a')"], ["grader", "code", "code"]),
        (["import grader", "(r := grader.check('a'))"], ["grader", "mixed"]),
        (["import grader", "x = 1; grader.check('a')"], ["grader", "mixed"]),
        (["import grader\nversion = grader.__version__", "print(softmax([1.0]), version)"], ["grader", "mixed"]),
        (["import grader", "grader.check('a'  # does not parse"], ["grader", "code"]),
        (["import grader", "def f():\n    return grader.check('a')"], ["grader", "mixed"]),
    ],
    ids=[
        "import-then-call",
        "alias",
        "from-import",
        "submodule",
        "star",
        "result-kept",
        "no-grader",
        "rebound",
        "walrus",
        "same-line",
        "value-used",
        "syntax-error",
        "inside-function",
    ],
)
def test_grader_cells_judge_each_cell_in_order(cells: list[str], kinds: list[str]) -> None:
    assert [kind for kind, _ in _verdicts(*cells)] == kinds


def test_grader_cells_left_out_of_a_cell_keep_its_code_and_line_numbers() -> None:
    cell = f"import grader\n{SOFTMAX}\ngrader.check(\n    'stable-softmax',\n)\nx = softmax(3)"
    ((kind, kept),) = _verdicts(cell)
    assert kind == "stripped"
    # a traceback's line numbers still point at the learner's lines
    assert kept.split("\n") == [PLACEHOLDER, *SOFTMAX.split("\n"), PLACEHOLDER, "", "", "x = softmax(3)"]
    namespace: dict[str, object] = {}
    exec(compile(kept, "cell", "exec"), namespace)  # noqa: S102 - the test's own code
    assert namespace["x"] == 3


@pytest.mark.parametrize(
    "cell",
    [
        "grader" + ".x" * 100_000 + "()",
        "import grader\n" + "(" * 300 + ")" * 300,
        "grader = 1\nx = " + "-" * 100_000 + "1",
    ],
    ids=["long-chain", "deep-parentheses", "deep-unary"],
)
def test_grader_cells_keep_a_cell_python_cannot_parse_as_code(cell: str) -> None:
    assert _verdicts(cell) == [("code", cell)]


def test_grader_cells_parse_a_bounded_amount_of_source() -> None:
    long_cell = "import grader\nx = [" + "1," * (MAX_PARSED_CELL // 2) + "]"
    assert _verdicts(long_cell) == [("code", long_cell)]  # too long to parse: the learner's code
    reader = GraderCells()
    cell = "import grader  # " + "x" * (MAX_PARSED_CELL - 100)
    kinds = [reader.judge(cell).kind for _ in range(MAX_PARSED_TOTAL // len(cell) + 2)]
    assert kinds[0] == "grader" and kinds[-1] == "code"  # once the notebook's budget is spent, cells are kept
    many = GraderCells()
    many.judge("from grader import " + ", ".join(f"name{index}" for index in range(2_000)))
    assert len(many.names) == MAX_NAMES  # each later cell is searched for each name: their number is bounded


def test_notebook_notes_say_which_cells_lost_grader_code() -> None:
    raw = notebook(
        ("code", "import numpy as np\nimport grader"),
        ("code", f"{SOFTMAX}\ngrader.check('stable-softmax')"),
        ("markdown", "grader.check('not code')"),
        ("code", "grader.check('stable-softmax')"),
        ("code", "x = 1; grader.check('a')"),
    )
    source, notes = convert_notebook(raw.encode(), "work.ipynb")
    text = source.decode()
    assert "# cell 4" not in text and "import numpy as np" in text and "x = 1; grader.check('a')" in text
    assert notes == [
        "work.ipynb: graded as one Python file made of its 3 code cells, in order.",
        "work.ipynb: cells that only import or call the grader were left out: cell 4.",
        "work.ipynb: lines that import or call the grader were left out of cell 1, cell 2; "
        "the rest of those cells was graded.",
        "work.ipynb: cell 5 mixes the grader's lines with your code in a way that cannot be taken apart safely, "
        "so it was graded as written, where the grader cannot be called; put the grader's lines in a cell of "
        "their own.",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("solution", ["reference.py", "wrong_no_max_shift.py"], ids=["correct", "buggy"])
def test_a_notebook_grades_the_same_with_its_grader_cells(session, tmp_path: Path, solution: str) -> None:
    code = (SOLUTIONS / solution).read_text(encoding="utf-8")
    plain = tmp_path / "plain" / "work.ipynb"
    checked = tmp_path / "checked" / "work.ipynb"
    plain.parent.mkdir()
    checked.parent.mkdir()
    plain.write_text(notebook(("code", code), ("code", "z = softmax([1.0, 2.0])")))
    checked.write_text(
        notebook(
            ("code", "import grader"),
            ("code", code),
            ("code", "grader.check('stable-softmax')"),
            ("code", "z = softmax([1.0, 2.0])\nresult = grader.check('stable-softmax')"),
            ("code", "from grader import check\ncheck('stable-softmax', exercises_dir='public-checks')"),
        )
    )
    reports = [session.grade(path, exercise_ids=["stable-softmax"]) for path in (plain, checked)]
    assert [e.file for e in reports[1].exercises] == [str(checked)]  # each graded at its own file
    exercises = [
        json.dumps([{k: v for k, v in to_data(e).items() if k != "file"} for e in report.exercises], sort_keys=True)
        for report in reports
    ]
    assert exercises[0] == exercises[1]
    assert reports[0].score == reports[1].score and reports[1].max_score > 0
    assert any("were left out: cell 1, cell 3, cell 5." in note for note in reports[1].problems)


def test_kernel_cells_that_raised_run_as_the_kernel_ran_them() -> None:
    cells = [
        ("In [1]", "def f():\n    return 1\nraise ValueError('after f')"),
        ("In [2]", "y = f() + 1"),
        ("In [3]", "this is not Python"),
        ("In [4]", "z = y * 10"),
    ]
    converted = convert_cells(cells, "this kernel", raised={"In [1]", "In [3]"})
    namespace: dict[str, object] = {}
    exec(compile(converted.source, "kernel.py", "exec"), namespace)  # noqa: S102 - the test's own cells
    assert (namespace["y"], namespace["z"]) == (2, 20)  # f, defined before the exception, counts
    assert converted.cells == 4
    assert converted.notes == [
        "this kernel: In [1], In [3] raised an exception when they ran, so they run here the same way, each "
        "exception ignored: what each did before raising still counts."
    ]
    with pytest.raises(ValueError, match="after f"):  # without the record, a cell that raised stops the file
        exec(compile(convert_cells(cells[:2], "this kernel").source, "kernel.py", "exec"), {})  # noqa: S102
