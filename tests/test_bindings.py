"""The scan of learner source for entry bindings sees what Python binds at module level, and nothing in strings.

``scan_names`` lexes source as Python's tokenizer does (strings of every
kind, comments, line joining, indentation) without parsing it. These tests
hold it to Python's own reading: every binding form it must see, every
look-alike it must not, files that stop being Python part way, and
generated sources compared with what ``ast`` says the module binds; and
``binding_line`` and ``statement_starts`` with the lines ``ast`` gives a name's
last top-level binding and each top-level statement.
"""

from __future__ import annotations

import ast
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grader.grading import GradingSession
from grader.submission.bindings import binding_line, scan_names, statement_starts
from grader.submission.files import Submission
from tests.cpu_time import grows_linearly

NAMES = ["softmax", "log_softmax"]
MIB = 1 << 20


def _bound(source: str) -> set[str]:
    return scan_names(source, NAMES).bound


@pytest.mark.parametrize(
    "source",
    [
        "def softmax(z):\n    return z\n",
        "async def softmax(z):\n    return z\n",
        "class softmax:\n    pass\n",
        "softmax = f\n",
        "softmax: T = f\n",
        "from helpers import softmax\n",
        "import softmax\n",
        "if True:\n    def softmax(z):\n        return z\n",
        "try:\n    from scipy.special import softmax\nexcept ImportError:\n    pass\n",
        "try:\n    import x\nexcept ImportError:\n    softmax = None\n",
        "if x:\n    pass\nelse:\n    softmax = f\n",
        "with ctx():\n    softmax = f\n",
        "while False:\n    pass\nelse: softmax = f\n",
        "x = 1; softmax = f\n",
        "a.b = softmax = f\n",
        "a.b, softmax = g, f\n",
        "softmax = (\n    f\n)\n",
        "x = 1 \\\n    + 2\nsoftmax = f\n",
        "def g():\n    pass\nsoftmax = g\n",
        "class A:\n    x = 1\n\n\n# a comment\nsoftmax = A\n",
        'x = """\n"""\nsoftmax = x\n',
        "x = '#'\nsoftmax = x\n",
        "x = 'it''s'\nsoftmax = x\n",
        "x = r'\\''\nsoftmax = x\n",
        "@decorator\ndef softmax(z):\n    return z\n",
        "if(x):\n    softmax = f\n",
        "\ufeffsoftmax = f\n",
        "x = 1\r\nsoftmax = f\r\n",
    ],
    ids=lambda source: source.replace("\n", "|")[:40],
)
def test_scan_sees_every_module_level_binding(source: str) -> None:
    ast.parse(source.removeprefix("\ufeff"))
    scan = scan_names(source, NAMES)
    assert "softmax" in scan.bound and scan.readable


@pytest.mark.parametrize(
    "source",
    [
        '"""Notes.\n\ndef softmax(z):\n    return z\n"""\n',
        "'''\nsoftmax = 1\n'''\n",
        'x = "softmax = 1"\n',
        "x = 'def softmax(z):'\n",
        'x = f"""\ndef softmax(z):\n"""\n',
        'x = rb"""\nsoftmax = 1\n"""\n',
        "x = '\\\nsoftmax = 1'\n",
        'x = f"{softmax}"\n',
        "# softmax = 1\n",
        "x = 1  # softmax = 1\n",
        "#\n#\ndef g():\n    softmax = 1\n",
        "def g():\n    def softmax(z):\n        return z\n",
        "def g(): softmax = 1\n",
        "class A:\n    softmax = staticmethod(f)\n",
        "class A:\n    if True:\n        softmax = f\n",
        "a.softmax = f\n",
        "a[softmax] = f\n",
        "a[i, softmax] = f\n",
        "f(softmax=1)\n",
        "f(\nsoftmax=1)\n",
        "x = [\nsoftmax for softmax in y]\n",
        "softmax += 1\n",
        "softmax == 1\n",
        "softmax: T\n",
        "x = lambda softmax=1: 0\n",
        "import x.softmax\n",
        "from m import softmax as s\n",
    ],
    ids=lambda source: source.replace("\n", "|")[:40],
)
def test_scan_sees_no_binding_in_strings_comments_or_nested_scopes(source: str) -> None:
    ast.parse(source)
    scan = scan_names(source, NAMES)
    assert scan.bound == set() and "softmax" in scan.mentioned and scan.readable


@pytest.mark.parametrize(
    ("source", "bound"),
    [
        ("softmax = f\nx = 'unclosed\nlog_softmax = f\n", {"softmax"}),
        ('softmax = f\nx = """never closed\nlog_softmax = f\n', {"softmax"}),
        ("softmax = f\nx = (1,\nlog_softmax = f\n", {"softmax"}),
        ("softmax = f\nx = 1 \\ 2\nlog_softmax = f\n", {"softmax"}),
        ("softmax = f\n    x = 1\nlog_softmax = f\n", {"softmax"}),
        ("softmax = f\nif x:\nlog_softmax = f\n", {"softmax"}),
        ('x = """\ndef softmax(z):\n', set()),
        ("def softmax(z)\n    return z\n", {"softmax"}),
    ],
    ids=["unclosed-string", "unclosed-triple", "unclosed-bracket", "stray-backslash", "unexpected-indent",
         "expected-indent", "docstring-never-closed", "header-without-colon"],
)  # fmt: skip
def test_scan_reads_a_broken_file_up_to_where_it_stops_being_python(source: str, bound: set[str]) -> None:
    """What came before is read (importing the file shows the learner its error); what follows is not."""
    scan = scan_names(source, NAMES)
    assert scan.bound == bound
    assert not scan.readable


def test_locate_does_not_take_a_newer_file_that_quotes_the_entry_in_a_docstring(catalog: Any) -> None:
    probed: list[list[str]] = []
    session = SimpleNamespace(catalog=catalog, _probe=lambda submission, sources, names: probed.append(names) or {})
    files = {
        "final.py": b"import numpy as np\ndef softmax(z, axis=-1):\n    return z\n",
        "notes.py": b'"""What I learnt.\n\ndef softmax(z, axis=-1):\n    subtract the max first\n"""\n',
    }
    submission = Submission(label="x", python=files, modified={"final.py": 1, "notes.py": 2})
    located, notes = GradingSession.locate_with_notes(session, submission, None)  # type: ignore[arg-type]
    assert located["softmax"].module == "final.py" and "softmax" not in notes and not probed


_PIECES = st.sampled_from(
    [
        "softmax",
        "log_softmax",
        "a",
        " = ",
        "=",
        "==",
        ", ",
        "(",
        ")",
        "[",
        "]",
        ": ",
        ":",
        "*",
        "+=",
        ".",
        "1",
        ";",
        "def ",
        "class ",
        "async ",
        "import ",
        "from m import ",
        " as ",
        "lambda ",
        "if a",
        "else",
        "try",
        "except",
        "    ",
        "\t",
        "# ",
        "\n",
        "\\\n",
        "'",
        '"',
        "'''",
        '"""',
        "f'",
        "r'",
        "{",
        "}",
        "\\",
        "f(",
    ]
)
GENERATED = settings(
    derandomize=True, database=None, deadline=None, max_examples=1500, suppress_health_check=[HealthCheck.too_slow]
)


@GENERATED
@given(st.lists(_PIECES, max_size=30).map("".join))
@example("if a:\n    softmax = 1\n")
@example("x = '''\nsoftmax = 1\n'''\nlog_softmax = 2\n")
@example("def f():\n    softmax = 1\nlog_softmax = 2\n")
@example("try:\n    import softmax\nexcept:\n    pass\n")
def test_scan_agrees_with_python_on_what_a_module_binds(text: str) -> None:
    scan = scan_names(text, NAMES)
    tree = _python_tree(text)
    if tree is None:
        return
    assert scan.bound == _module_bindings(tree.body) & set(NAMES)
    assert scan.readable or not scan.mentioned


@GENERATED
@given(st.lists(_PIECES, max_size=30).map("".join))
@example("\\\nsoftmax = 1\n")
@example("x = 1\n\\\n\\\nsoftmax = 1\n")
@example("a = (1,\n2); softmax = 3\n")
@example('"""doc\n"""; softmax = 1\n')
@example("@dec\n\ndef softmax(): pass\n")
@example("# c\n  # d\nsoftmax = 1\nsoftmax = softmax\n")
@example("x = (1,\n # c\n 2)\nlog_softmax = 1\nsoftmax = 2\n")
@example("softmax = 1\nif a:\n    softmax = 2\n")
@example("x = '''\nsoftmax = 1\n'''\nsoftmax, a = 2, 3\n")
@example("softmax: int\nsoftmax: int = 1\nimport softmax\n")
@example("def softmax(): pass\r\nsoftmax = 2\r\n")
def test_binding_line_agrees_with_python_on_where_a_name_is_last_bound_at_top_level(text: str) -> None:
    tree = _python_tree(text)
    if tree is None:
        return
    lines = _top_level_lines(tree.body)
    assert binding_line(text, NAMES) == next((lines[name] for name in NAMES if name in lines), None)


@GENERATED
@given(st.lists(_PIECES, max_size=30).map("".join))
@example("@dec\n@dec2\ndef f():\n    pass\nx = 1; y = 2\n")
@example("if a:\n    pass\nelif a:\n    pass\nelse:\n    pass\ntry:\n    pass\nexcept:\n    pass\nfinally:\n    pass\n")
@example("a = (1,\n2); b = 3\n\\\nc = 4\n")
@example("x = '''\n'''\n# c\n\ndef f(): pass\n")
def test_statement_starts_agree_with_python_on_where_top_level_statements_begin(text: str) -> None:
    tree = _python_tree(text)
    if tree is None:
        return
    begins, previous_end, expected = 0, -1, []
    for statement in tree.body:
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
        if first != previous_end:  # else it follows a ``;``, on the logical line begun before
            begins = first
            expected.append(begins)
        previous_end = statement.end_lineno or statement.lineno
    assert statement_starts(text) == expected


def _python_tree(text: str) -> ast.Module | None:
    """What Python makes of ``text``; ``None`` where it does not parse, and the lexer is held to nothing."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _top_level_lines(body: list[ast.stmt]) -> dict[str, int]:
    """What ``binding_line`` promises: each name's last top-level def, class or assignment (with a value, to
    targets without a subscript or call), on the line its logical line begins (a statement that starts on the
    line the one before it ends on follows a ``;``)."""
    lines: dict[str, int] = {}
    begins, previous_end = 0, -1
    for statement in body:
        begins = begins if statement.lineno == previous_end else statement.lineno
        previous_end = statement.end_lineno or statement.lineno
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[statement.name] = begins
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if not any(isinstance(node, (ast.Subscript, ast.Call)) for node in ast.walk(target)):
                    lines.update(dict.fromkeys(_stored(target), begins))
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            lines.update(dict.fromkeys(_stored(statement.target), begins))
    return lines


def _module_bindings(body: list[ast.stmt]) -> set[str]:
    """What ``scan_names`` promises to see: defs, classes, imports and plain assignments in the module's scope."""
    bound: set[str] = set()
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if not any(isinstance(node, (ast.Subscript, ast.Call)) for node in ast.walk(target)):
                    bound.update(_stored(target))
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            bound.update(_stored(statement.target))
        for block in ("body", "orelse", "finalbody"):
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound |= _module_bindings(getattr(statement, block, []))
        for handler in getattr(statement, "handlers", []):
            bound |= _module_bindings(handler.body)
    return bound


def _stored(target: ast.expr) -> set[str]:
    return {
        node.id
        for node in ast.walk(target)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node is not getattr(target, "value", None)
    }


CRAFTED = {
    "many-empty-strings": "softmax = 1\n" + "'a'," * (MIB // 4),
    "escapes-in-a-string": "softmax\n'" + "\\\\" * (MIB // 2) + "'",
    "escaped-quotes-in-triple": 'softmax\n"""' + '\\"' * (MIB // 2) + '"""',
    "comment-lines": "softmax\n" + "#\n" * (MIB // 2),
    "short-lines": "softmax\n" + "a\n" * (MIB // 2),
    "name-lines": "a=softmax\n" * (MIB // 10),
    "alternating-brackets": "softmax = " + "()" * (MIB // 2),
    "deep-indentation": "softmax\n" + "".join(" " * i + "if a:\n" for i in range(1400)),
    "continuations": "softmax = 1 \\\n" * (MIB // 14),
    "f-strings": "softmax\n" + 'f"{a}"' * (MIB // 6),
    "nested-f-strings": "softmax = " + 'f"{' * (MIB // 3),
    "headers": "if softmax: softmax = 1\n" * (MIB // 24),
    "brackets-in-a-header": "if " + "(" * (MIB // 3) + "softmax" + ")" * (MIB // 3) + ": softmax = 1\n",
    "semicolons": "softmax = 1" + ";" * MIB,
    "keyword-arguments": "softmax = f(" + "a=1," * (MIB // 4) + ")",
}


@pytest.mark.parametrize("text", list(CRAFTED.values()), ids=list(CRAFTED))
def test_scan_is_linear_on_crafted_strings_comments_and_blocks(text: str) -> None:
    assert grows_linearly(lambda source: scan_names(source, NAMES), text)
