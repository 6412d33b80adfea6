"""Every parser the grader runs on learner files in its own process is linear in its input and bounded.

The parsers: notebook JSON (``convert_notebook``), IPython line stripping
(``is_ipython_line``), the scan of source for entry names (``scan_names``)
and the reading of ``.py`` files (``read_submission``). Each is fed a
crafted 1 MiB input that a backtracking regular expression, a recursive
parser or an unbounded copy would take seconds to hours on, and must finish
well under a second of CPU time. Generated inputs (Hypothesis, derandomized) check that
no learner file makes one raise anything but its own "graded with a reason"
problem.
"""

from __future__ import annotations

import ast
import json
import re
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grader.submission.bindings import binding_line, scan_names, statement_starts
from grader.submission.files import MAX_PY_BYTES, MAX_SUBMISSION_PY_BYTES, read_submission
from grader.submission.notebook import (
    MAX_CODE_BYTES,
    MAX_NOTEBOOK_VALUES,
    NotebookProblem,
    convert_notebook,
    is_ipython_line,
)
from tests.cpu_time import cpu_seconds, grows_linearly

MIB = 1 << 20
GENERATED = settings(
    derandomize=True, database=None, deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow]
)
ENTRIES = ["softmax", "log_softmax", "softmax_jacobian", "cross_entropy"]

# The expression the grader used to strip IPython lines: it backtracks on a long run of spaces. Kept here as
# the reference for what counts as an IPython line, on inputs small enough for it.
OLD_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!](?!=)|[^#'\"]*\?{1,2}\s*$)")


def _notebook(*sources: Any) -> bytes:
    return json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": s} for s in sources]}).encode()


def _timed(work: Callable[[], object]) -> float:
    """CPU seconds ``work`` took, a notebook it refuses counting as done."""
    return cpu_seconds(work, (NotebookProblem,))


PATHOLOGICAL_LINES = {
    "spaces-then-char": " " * MIB + "x",
    "spaces-equals-spaces": " " * (MIB // 2) + "=" + " " * (MIB // 2) + "x",
    "target-then-no-magic": "a," * (MIB // 2) + "= 1",
    "question-marks-then-hash": "?" * MIB + "#",
    "spaces-question-spaces-quote": (" ?" * (MIB // 2)) + "'",
}


@pytest.mark.parametrize("line", list(PATHOLOGICAL_LINES.values()), ids=list(PATHOLOGICAL_LINES))
def test_is_ipython_line_is_linear_on_crafted_lines(line: str) -> None:
    assert _timed(lambda: is_ipython_line(line)) < 1


@GENERATED
@given(st.text(alphabet=" \t\u00a0%!=?#'\".,_aZ9é\n(", max_size=30))
@example("x = 1 % 2")
@example("y = a != b")
@example("files = !ls")
@example("   = %x")
@example("a.b, c = %env X")
@example("x = %= 3")
@example("np.exp??  ")
def test_is_ipython_line_agrees_with_the_old_expression(line: str) -> None:
    assert is_ipython_line(line) == bool(OLD_IPYTHON_LINE.match(line))


PATHOLOGICAL_NOTEBOOKS = {
    "string-of-spaces": _notebook('s = """\n' + " " * (MIB - 64) + 'x\n"""\n'),
    "many-space-lines": _notebook(("  " * 60 + "x\n") * (MIB // 128)),
    "deep-nesting": b"[" * MIB,
    "deep-objects": b'{"a":' * (MIB // 5),
    "many-empty-cells": b'{"cells": [' + b'{"cell_type":"code","source":""},' * (MIB // 40) + b"{}]}",
    "many-containers": b"[" + b"[]," * (MIB // 3) + b"[]]",
    "long-digits": b'{"cells": [], "n": ' + b"9" * MIB + b"}",
    "many-magics": _notebook("%time x\n" * (MIB // 10)),
    "empty-lines-and-a-magic": _notebook("%time x\n" + "\n" * (MIB // 2 - 64)),
    "short-magics-growing": _notebook("!\n" * (MIB // 4)),
    "whole-cell-magic-of-many-lines": _notebook("%%bash\n" + "a\n" * (MIB // 3)),
    "a-percent-on-every-line": _notebook("x = 1 % 2 if a == b else c ?\n" * (MIB // 32)),
    "escapes": b'{"cells": [{"cell_type":"code","source":"' + b"\\u0041" * (MIB // 6) + b'"}]}',
}


@pytest.mark.parametrize("raw", list(PATHOLOGICAL_NOTEBOOKS.values()), ids=list(PATHOLOGICAL_NOTEBOOKS))
def test_convert_notebook_is_linear_on_crafted_notebooks(raw: bytes) -> None:
    assert len(raw) <= MIB + 256
    assert _timed(lambda: convert_notebook(raw, "work.ipynb")) < 1


PATHOLOGICAL_SOURCES = {
    "commas-after-name": "f(a" + ",softmax" * (MIB // 8) + ")",
    "name-per-line": "softmax\n" * (MIB // 8),
    "chained-targets": "softmax = " * (MIB // 10) + "1",
    "many-equals": "a=" * (MIB // 2) + "softmax",
    "many-lines-not-binding": "a=softmax\n" * (MIB // 10),
    "one-long-tuple-target": "a, " * (MIB // 3) + "softmax = 1",
    "long-import": "import " + "softmax, " * (MIB // 9),
    "long-from-import": "from m import " + "softmax as s, " * (MIB // 14),
    "deep-parentheses": "softmax = " + "(" * MIB,
    "nested-calls": "softmax = f" + "(1)" * (MIB // 3),
    "spaces": " " * MIB + "softmax",
    "all-names-on-every-line": (" ".join(ENTRIES) + " = 1\n") * (MIB // 50),
    "word-prefixes": "log_softmax_" * (MIB // 12),
}


@pytest.mark.parametrize("text", list(PATHOLOGICAL_SOURCES.values()), ids=list(PATHOLOGICAL_SOURCES))
def test_scan_names_is_linear_on_crafted_source(text: str) -> None:
    assert grows_linearly(lambda source: scan_names(source, ENTRIES), text)


@pytest.mark.parametrize("text", list(PATHOLOGICAL_SOURCES.values()), ids=list(PATHOLOGICAL_SOURCES))
def test_binding_line_is_linear_on_crafted_source(text: str) -> None:
    assert grows_linearly(lambda source: binding_line(source, ENTRIES), text)


@pytest.mark.parametrize("text", list(PATHOLOGICAL_SOURCES.values()), ids=list(PATHOLOGICAL_SOURCES))
def test_statement_starts_is_linear_on_crafted_source(text: str) -> None:
    assert grows_linearly(statement_starts, text)


def test_reading_a_folder_of_crafted_python_files_is_bounded(tmp_path: Path) -> None:
    for index in range(64):  # the most files a folder may hold, each at the cap
        (tmp_path / f"f{index:02}.py").write_text(PATHOLOGICAL_SOURCES["commas-after-name"][:MAX_PY_BYTES])
    started = time.process_time()
    submission = read_submission(tmp_path)
    scans = [scan_names(data.decode("utf-8", "replace"), ENTRIES) for data in submission.python.values()]
    assert time.process_time() - started < 2  # the submission's total cap bounds the scan: 4 MiB of source
    assert sum(map(len, submission.python.values())) <= MAX_SUBMISSION_PY_BYTES
    assert all("softmax" in scan.mentioned and not scan.bound for scan in scans)
    assert any("with it, the submission's Python would come to more than 4 MiB" in note for note in submission.notes)


@pytest.mark.parametrize(
    ("source", "bound"),
    [
        ("def softmax(z, axis=-1):", {"softmax"}),
        ("async def softmax(z):", {"softmax"}),
        ("def\tsoftmax(z):", {"softmax"}),
        ("class softmax:", {"softmax"}),
        ("softmax = f", {"softmax"}),
        ("softmax=f", {"softmax"}),
        ("softmax: Callable = f", {"softmax"}),
        ("a, softmax = 1, 2", {"softmax"}),
        ("(a, softmax) = g()", {"softmax"}),
        ("*a, softmax = g()", {"softmax"}),
        ("softmax, = g()", {"softmax"}),
        ("x = y = softmax = 3", {"softmax"}),
        ("from helpers import softmax", {"softmax"}),
        ("from helpers import (softmax,\n    log_softmax)", {"softmax", "log_softmax"}),
        ("from . import log_softmax as softmax", {"softmax"}),
        ("import softmax", {"softmax"}),
        ("import x as softmax", {"softmax"}),
        ("\ufeffsoftmax = 1", {"softmax"}),
        ("softmax = 1  # a comment", {"softmax"}),
        ("softmax = lambda z, axis=-1: z", {"softmax"}),
        ("x = softmax", set()),
        ("softmax += 1", set()),
        ("softmax == 1", set()),
        ("f(softmax=1)", set()),
        ("    softmax = 1", set()),
        ('x = "a, softmax = 3"', set()),
        ("softmax.x = 1", set()),
        ("if True: softmax = 1", {"softmax"}),
        ("x = lambda softmax=1: 0", set()),
        ("print(1)  # softmax = 1", set()),
        ("import x.softmax", set()),
        ("from helpers import *  # softmax", set()),
        ("softmax: Callable", set()),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_scan_names_reads_module_level_bindings(source: str, bound: set[str]) -> None:
    scan = scan_names(f"{source}\nimport numpy as np\nprint(np)\n", ["softmax", "log_softmax"])
    assert scan.bound == bound
    assert "softmax" in scan.mentioned


_SOURCE_PIECES = st.sampled_from(
    [
        "softmax",
        "log_softmax",
        "a",
        "b",
        " = ",
        "=",
        "==",
        ", ",
        "(",
        ")",
        "[",
        "]",
        ": ",
        "*",
        "+=",
        "def ",
        "class ",
        "async ",
        "import ",
        "from m import ",
        " as ",
        ".",
        "1",
        "lambda ",
        "    ",
        "# ",
        "\n",
        "\\\n",
        "f(",
        "if a: ",
    ]
)


@GENERATED
@given(st.lists(_SOURCE_PIECES, max_size=25).map("".join))
def test_scan_names_binds_only_what_python_binds_at_module_level(text: str) -> None:
    scan = scan_names(text, ["softmax", "log_softmax"])
    assert scan.bound <= scan.mentioned
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    assert scan.bound <= _module_level_bindings(tree)


def _module_level_bindings(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            bound.update(node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name))
    return bound


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_CELL = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "markdown", 3])},
    optional={"source": _JSON | st.lists(st.text(max_size=30), max_size=4), "input": _JSON},
)


@GENERATED
@given(
    st.one_of(
        _JSON,
        st.fixed_dictionaries({"cells": st.lists(_CELL | _JSON, max_size=5)}),
        st.fixed_dictionaries(
            {"worksheets": st.lists(st.fixed_dictionaries({"cells": st.lists(_CELL, max_size=4)}) | _JSON, max_size=3)}
        ),
    )
)
def test_convert_notebook_of_any_json_converts_or_says_why(data: Any) -> None:
    try:
        source, notes = convert_notebook(json.dumps(data).encode(), "work.ipynb")
    except NotebookProblem as problem:
        assert str(problem).startswith("work.ipynb")
        return
    source.decode("utf-8")
    assert notes[0].startswith("work.ipynb: graded as one Python file")


@GENERATED
@given(st.binary(max_size=200))
@example(b'{"cells": [{"cell_type": "code", "source": "x = \\"\\ud800\\""}]}')
@example(b"\xef\xbb\xbf{}")
def test_convert_notebook_of_any_bytes_converts_or_says_why(raw: bytes) -> None:
    try:
        convert_notebook(raw, "work.ipynb")
    except NotebookProblem as problem:
        assert str(problem).startswith("work.ipynb")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_notebook('x = "\ud800"'), "cell 1 holds text that is not valid Unicode"),
        (_notebook("x = 1\n" * (MAX_CODE_BYTES // 6 + 1)), "more than 1 MiB of Python"),
        (_notebook(*["x = 1\n" * 1000] * (MAX_CODE_BYTES // 6000 + 1)), "more than 1 MiB of Python"),
        (b"[" + b"0," * MAX_NOTEBOOK_VALUES + b"0]", "more than 2,097,152 JSON values"),
        (b'{"cells": [], "n": ' + b"9" * 5000 + b"}", "not valid notebook JSON"),
        (b"[" * 100000, "nested too deeply"),
    ],
    ids=["lone-surrogate", "code-over-cap", "cells-over-cap", "values-over-cap", "huge-integer", "deep"],
)
def test_convert_notebook_refuses_with_a_reason(raw: bytes, message: str) -> None:
    with pytest.raises(NotebookProblem, match=re.escape(message)):
        convert_notebook(raw, "work.ipynb")


@pytest.mark.parametrize(
    "raw",
    [
        _notebook("%%bash\n" + "ab\n" * (8 * MIB // 4)),
        _notebook("%time x\n" + "ab\n" * (8 * MIB // 4)),
        _notebook("%time x\n" + "\r" * (8 * MIB // 3)),
        _notebook(["a"] * MIB),
    ],
    ids=["whole-cell-magic", "lines-over-cap", "carriage-returns-over-cap", "list-of-a-million-parts"],
)
def test_convert_notebook_memory_stays_near_the_file_size(raw: bytes) -> None:
    tracemalloc.start()
    try:
        convert_notebook(raw, "work.ipynb")
    except NotebookProblem:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 4 * len(raw)  # millions of lines are counted, never split into a list of millions


def test_convert_notebook_notes_code_cells_whose_source_is_not_text() -> None:
    source, notes = convert_notebook(_notebook("a = 1", 3, ["b = ", 2], {"x": 1}, ["c = 3"]), "work.ipynb")
    assert b"a = 1" in source and b"c = 3" in source and b"b = " not in source
    assert notes[-1] == "work.ipynb: code cells whose source is not text were left out: cell 2, cell 3, cell 4."


def test_convert_notebook_takes_source_as_a_string_or_a_list_of_strings() -> None:
    as_list, _ = convert_notebook(_notebook(["a = 1\n", "b = 2\n"]), "work.ipynb")
    as_text, _ = convert_notebook(_notebook("a = 1\nb = 2\n"), "work.ipynb")
    assert as_list == as_text and b"a = 1\nb = 2" in as_text


@pytest.mark.parametrize(
    ("content", "note"),
    [
        (b"x = 1\n" * (MAX_PY_BYTES // 6 + 1), "big.py is larger than 1024 KiB and was not graded."),
        (b"x = 1\x00\n", None),
        (b"x = '\xff\xfe'\n", None),
        (b"x = " + b"(" * 100000, None),
    ],
    ids=["over-cap", "nul-byte", "not-utf8", "deep-nesting"],
)
def test_read_submission_keeps_odd_python_for_the_learner_process_and_refuses_huge(
    tmp_path: Path, content: bytes, note: str | None
) -> None:
    (tmp_path / "big.py").write_bytes(content)
    submission = read_submission(tmp_path / "big.py")
    if note is None:  # its import, in the learner process, says what is wrong with it
        assert submission.python == {"big.py": content} and not submission.notes
        scan_names(content.decode("utf-8", "replace"), ENTRIES)
    else:
        assert not submission.python and submission.notes == [note]


def test_locate_reads_which_file_binds_each_entry_and_probes_only_the_unsure(catalog: Any) -> None:
    from types import SimpleNamespace

    from grader.grading import GradingSession
    from grader.submission.files import Submission

    probed: list[list[str]] = []
    session = SimpleNamespace(catalog=catalog, _probe=lambda submission, sources, names: probed.append(names) or {})
    files = {
        "a.py": b"import numpy as np\ndef softmax(z, axis=-1):\n    return z\n",
        "b.py": b"from a import softmax\nlog_softmax = lambda z, axis=-1: z\n",
        "c.py": b"x = [cross_entropy for _ in ()]\n",
    }
    located = GradingSession.locate(session, Submission(label="x", python=files), None)  # type: ignore[arg-type]
    assert located["log_softmax"].module == "b.py"
    # Two files bind softmax, but b.py only imports it from a.py: reading decides; only c.py's mention is probed.
    assert located["softmax"].module == "a.py" and probed == [["cross_entropy"]]
