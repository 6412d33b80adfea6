"""Report formats against golden files: text, json, junit, gradescope, markdown.

Each case is a hand-built ``Report`` (no sandbox, no grading), rendered in
every format and compared byte for byte with ``tests/golden/CASE.EXT``.

After an intended change to a format, regenerate the golden files from the
repository root with::

    python -m tests.golden.regenerate

then read the diff (``git diff tests/golden``) before committing it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.report import FORMATS, render
from grader.report.gradescope import format_gradescope
from grader.report.junit import format_junit
from grader.report.markdown import format_markdown, markdown_code, markdown_fence, markdown_text
from grader.results import CheckResult, ExerciseResult, Report, SandboxInfo

GOLDEN = Path(__file__).resolve().parent / "golden"
SUFFIXES = {"text": "txt", "json": "report.json", "junit": "xml", "gradescope": "gradescope.json", "markdown": "md"}
SUFFIXES.update({"github": "github.txt", "github-classroom": "classroom.json"})
HOSTILE_OUTPUT = (
    "\x1b[32m12 passed, 0 failed\x1b[0m\n"
    '</failure></testcase><testcase name="forged"/>\n'
    "```\n"
    "# All checks passed\n"
    "<script>alert(1)</script>\n"
    "````text\n"
    "]]> &amp; \x00\x07\x08\x0b\x0c\x7f\x85 \u202eevil\r\n"
    "12 passed, 0 failed\n"
)


def _check(id: str, status: str = "passed", points: float = 1.0, visibility: str = "public", **fields) -> CheckResult:
    reason = fields.pop("reason", f"{id} holds, verified on 10 inputs.")
    return CheckResult(
        id=id,
        status=status,
        score=points if status == "passed" else 0.0,
        max_score=points,  # type: ignore[arg-type]
        visibility=visibility,
        reason=reason,
        **fields,
    )


def _report(*exercises: ExerciseResult, **fields) -> Report:
    fields.setdefault("submission", "work/mine.py")
    return Report(
        grader_version="0.1.0",
        score=sum(e.score for e in exercises),
        max_score=sum(e.max_score for e in exercises),
        exercises=list(exercises),
        **fields,
    )


def _exercise(id: str, status: str, checks: list[CheckResult], reason: str, **fields) -> ExerciseResult:
    fields.setdefault("title", "A softmax that never overflows")
    fields.setdefault("kind", "implementation")
    max_score = fields.pop("max_score", sum(c.max_score for c in checks))
    return ExerciseResult(
        id=id,
        status=status,
        score=sum(c.score for c in checks),
        max_score=max_score,  # type: ignore[arg-type]
        reason=reason,
        checks=checks,
        **fields,
    )


TIER_A = SandboxInfo(tier="A", landlock_abi=7, seccomp=True, caps_dropped=True)


def case_passed() -> Report:
    checks = [
        _check("matches-reference", points=2.0),
        _check("rows-sum-to-one"),
        _check("finite-for-large-inputs", visibility="hidden"),
    ]
    return _report(_exercise("stable-softmax", "passed", checks, "All 3 checks passed."), sandbox=TIER_A)


def case_failed() -> Report:
    checks = [
        _check("matches-reference", points=2.0),
        _check(
            "rows-sum-to-one",
            "failed",
            property="the weights softmax returns sum to 1 along the normalised axis",
            input="softmax(z=array([1000., 1001.]), axis=-1)",
            expected="sums array([1.]) (atol 1e-09)",
            got="sums array([nan]) along axis -1",
            hint="subtract each slice's maximum first.",
            note="Every weight is nan.",
            diagnosis="exp(z) is computed without subtracting the maximum first, so large scores overflow.",
            more_failures=3,
            reason="the weights softmax returns sum to 1 along the normalised axis, but not for "
            "softmax(z=array([1000., 1001.]), axis=-1). Expected sums array([1.]) (atol 1e-09); "
            "got sums array([nan]) along axis -1. This matches a known mistake: exp(z) is computed without "
            "subtracting the maximum first, so large scores overflow. (and 3 more failing inputs)",
        ),
        _check(
            "non-negative",
            "failed",
            visibility="hidden",
            reason="every weight softmax returns is non-negative: this did not hold on a hidden input.",
        ),
        _check(
            "order-preserving",
            "error",
            property="a higher score gets a higher weight from softmax",
            input="softmax(z=array([1., 2., 3.]), axis=-1)",
            expected="a returned array",
            got="softmax raised ZeroDivisionError: division by zero (mine.py line 4: return 1 / 0)",
            hint="a larger score must get a larger weight.",
            reason="a higher score gets a higher weight from softmax, but not for softmax(z=array([1., 2., 3.]), "
            "axis=-1). Expected a returned array; got softmax raised ZeroDivisionError: division by zero "
            "(mine.py line 4: return 1 / 0). Hint: a larger score must get a larger weight.",
        ),
        _check(
            "invariant-to-shift",
            "timeout",
            visibility="after_due_date",
            property="adding the same constant to every score leaves softmax unchanged",
            input="softmax(z=array([1., 2.]), axis=-1)",
            expected="an answer within the time limit",
            got="no answer within 2 s",
            reason="adding the same constant to every score leaves softmax unchanged, but not for "
            "softmax(z=array([1., 2.]), axis=-1). Expected an answer within the time limit; got no answer "
            "within 2 s.",
        ),
        _check(
            "leaves-input-unchanged",
            "timeout",
            visibility="after_published",
            reason="softmax leaves its input arrays unchanged: not run, because softmax already ran out of time "
            "on 2 earlier checks.",
        ),
    ]
    reason = (
        "1 of 6 checks passed; not passing: rows-sum-to-one, non-negative, order-preserving, "
        "invariant-to-shift, leaves-input-unchanged."
    )
    return _report(
        _exercise("stable-softmax", "failed", checks, reason, output="step 1\nstep 2\n"),
        sandbox=SandboxInfo(
            tier="C",
            warning="sandbox tier C: file reads are not confined; processes, sockets and signals are not blocked",
        ),
    )


def case_error() -> Report:
    why = "Not run: your file could not be imported (see above)."  # the exercise's reason says why, once
    checks = [
        _check(i, "error", visibility=v, reason=why)
        for i, v in (("matches-reference", "public"), ("rows-sum-to-one", "public"), ("non-negative", "hidden"))
    ]
    reason = "Your file has a SyntaxError at line 3 (invalid syntax): return e / e.sum(; none of its checks could run."
    return _report(_exercise("stable-softmax", "error", checks, reason, output="importing...\n"))


def case_missing() -> Report:
    implementation = ExerciseResult(
        id="stable-softmax",
        title="A softmax that never overflows",
        kind="implementation",
        status="missing",
        score=0.0,
        max_score=12.0,
        checks=[],
        reason="Not attempted: no file of the submission defines softmax().",
    )
    why = "No answers for why-softmax-quiz; add a 'why-softmax-quiz:' section to your answers file."
    quiz = _exercise(
        "why-softmax-quiz",
        "missing",
        [_check(q, "skipped", reason=why) for q in ("divide-by-sum-fails", "argmax-fails")],
        why,
        title="Why softmax",
        kind="quiz",
    )
    return _report(quiz, implementation, submission="work/")


def case_quiz() -> Report:
    checks = [
        _check("divide-by-sum-fails", reason="Right: you picked A (non-negative). Scores are often negative."),
        _check(
            "exp-first",
            "failed",
            reason="You picked A, D. Does not belong: D (it is bounded): exp is not "
            "bounded. Missing 2 options that also apply: B, C.",
        ),
        _check(
            "largest-weight",
            "failed",
            reason="Not quite: 0.25 is not within 0.001 of the answer. Divide exp(4.1) by the sum of the exponentials.",
        ),
    ]
    return _report(
        _exercise(
            "why-softmax-quiz",
            "failed",
            checks,
            "1 of 3 questions answered correctly.",
            title="Why softmax",
            kind="quiz",
        ),
        submission="answers.yaml",
    )


def case_hostile() -> Report:
    reason = (
        'softmax raised ValueError: </failure><error message="x"/> ``` <script>alert(1)</script> '
        "*bold* _it_ [link](http://example.com) | $x$ \x1b[31mred\x1b[0m \x00 ]]> &lt;"
    )
    checks = [
        _check(
            "matches-reference",
            "error",
            reason=reason,
            property="softmax returns the same values",
            input="softmax(z=array([1.])) `` ` ``",
            expected="a returned array",
            got="softmax raised ValueError: </failure> ```",
        ),
        _check("rows-sum-to-one", reason="passed <b>bold</b> | pipe\nnew line # heading"),
    ]
    exercise = _exercise(
        "stable-softmax",
        "error",
        checks,
        "1 of 2 checks passed; not passing: matches-reference.",
        title="Title | with *pipes* <i>",
        output=HOSTILE_OUTPUT,
    )
    return _report(
        exercise,
        submission="`mine`.py",
        problems=["mine.py answers 'x' again; the later file's answers were used. <b>\x1b[1m [link](http://x)"],
    )


def case_nothing() -> Report:
    problem = (
        "Nothing here attempts an exercise: no entry function is defined and no quiz is answered. "
        "Run 'grader list' to see the exercises and their entry functions."
    )
    return _report(submission="empty/", problems=[problem])


def case_public_only() -> Report:
    checks = [_check("matches-reference", points=2.0), _check("rows-sum-to-one")]
    exercise = _exercise(
        "stable-softmax",
        "passed",
        checks,
        "All 2 public checks passed; 8 hidden checks will run when your work is graded.",
        hidden_not_run=8,
    )
    return _report(exercise, public_only=True, hidden_not_run=8)


HANDOUT = (
    "Graded against a handout's public checks and its reference answers "
    "(public-checks/stable-softmax.answers.json), which whoever holds the handout can change: "
    "a self-check, not a grade of record."
)


def case_handout() -> Report:
    """A learner's self-check against the handout: the answers it compared with are the learner's to edit."""
    checks = [_check("matches-reference", points=2.0), _check("rows-sum-to-one", "failed", reason="sums are 2.")]
    exercise = _exercise("stable-softmax", "failed", checks, "1 of 2 checks passed; not passing: rows-sum-to-one.")
    return _report(exercise, public_only=True, handout=HANDOUT)


CASES: dict[str, Callable[[], Report]] = {
    "passed": case_passed,
    "failed": case_failed,
    "error": case_error,
    "missing": case_missing,
    "quiz": case_quiz,
    "hostile": case_hostile,
    "nothing": case_nothing,
    "public-only": case_public_only,
    "handout": case_handout,
}
PAIRS = [(case, fmt) for case in CASES for fmt in SUFFIXES]


def golden_path(case: str, format_name: str) -> Path:
    return GOLDEN / f"{case}.{SUFFIXES[format_name]}"


def regenerate() -> list[Path]:
    """Rewrite every golden file from the current formatters; returns the files written."""
    GOLDEN.mkdir(exist_ok=True)
    written = []
    for case, format_name in PAIRS:
        path = golden_path(case, format_name)
        path.write_bytes(render(CASES[case](), format_name).encode("utf-8"))
        written.append(path)
    return written


@pytest.mark.parametrize(("case", "format_name"), PAIRS, ids=[f"{c}-{f}" for c, f in PAIRS])
def test_format_matches_golden_file(case: str, format_name: str) -> None:
    path = golden_path(case, format_name)
    assert path.is_file(), f"{path} is missing; run: python -m tests.golden.regenerate"
    rendered = render(CASES[case](), format_name)
    assert rendered == path.read_bytes().decode("utf-8"), (
        f"{format_name} of case {case!r} differs from {path.name}; if the change is intended, run "
        "python -m tests.golden.regenerate and review the diff"
    )


def test_formats_registry_offers_every_cli_format() -> None:
    from grader.cli.commands import FORMAT_NAMES

    assert set(FORMAT_NAMES) <= set(FORMATS)


@pytest.mark.parametrize("format_name", list(SUFFIXES), ids=list(SUFFIXES))
def test_format_is_deterministic(format_name: str) -> None:
    assert render(case_failed(), format_name) == render(case_failed(), format_name)


# --- JUnit ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_junit_parses_and_counts_match(case: str) -> None:
    root = ET.fromstring(format_junit(CASES[case]()).encode("utf-8"))
    assert root.tag == "testsuites"
    for element in [root, *root.findall("testsuite")]:
        cases = list(element.iter("testcase"))
        assert int(element.get("tests", "-1")) == len(cases)
        for child, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            if element is root and key == "skipped":  # not in the JUnit schema on <testsuites>
                assert element.get(key) is None
                continue
            assert int(element.get(key, "-1")) == sum(c.find(child) is not None for c in cases)
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(names) == len(set(names))


def test_junit_maps_statuses_and_keeps_the_reason_in_message_and_text() -> None:
    root = ET.fromstring(format_junit(case_failed()))
    by_name = {case.get("name"): case for case in root.iter("testcase")}
    assert list(by_name["matches-reference"]) == []
    failure = by_name["rows-sum-to-one"].find("failure")
    assert failure is not None and failure.get("message") == failure.text
    assert "softmax(z=array([1000., 1001.]), axis=-1)" in (failure.text or "")
    assert by_name["order-preserving"].find("error") is not None
    assert by_name["invariant-to-shift"].find("error").get("type") == "timeout"  # type: ignore[union-attr]
    assert by_name["rows-sum-to-one"].get("classname") == "stable-softmax"


def test_junit_keeps_hostile_output_as_text() -> None:
    xml = format_junit(case_hostile())
    root = ET.fromstring(xml.encode("utf-8"))
    assert [c.get("name") for c in root.iter("testcase")].count("forged") == 0
    out = root.find("testsuite/system-out")
    assert out is not None and "</failure></testcase>" in (out.text or "")
    assert "\x1b" not in xml and "\x00" not in xml and "\\x1b[32m" in (out.text or "")
    error = root.find(".//error")
    assert error is not None and "</failure>" in error.get("message", "")


def test_junit_missing_exercise_is_a_failure_row() -> None:
    root = ET.fromstring(format_junit(case_missing()))
    attempted = root.find(".//testcase[@name='attempted']")
    assert attempted is not None and attempted.find("failure") is not None


def test_junit_missing_quiz_questions_are_failures_not_skipped() -> None:
    root = ET.fromstring(format_junit(case_missing()))
    suite = root.find("testsuite[@name='why-softmax-quiz']")
    assert suite is not None and suite.get("failures") == "2" and suite.get("skipped") == "0"
    assert {f.get("type") for f in suite.iter("failure")} == {"missing"}
    assert root.get("failures") == "3"


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_junit_counts_agree_with_the_json(case: str) -> None:
    """Rows and rows not passed are the same in both; no row of a missing exercise is merely skipped."""
    report = json.loads(render(CASES[case](), "json"))
    root = ET.fromstring(format_junit(CASES[case]()).encode("utf-8"))
    for exercise in report["exercises"]:
        suite = root.find(f"testsuite[@name='{exercise['id']}']")
        assert suite is not None
        rows = exercise["checks"] or [{"status": "failed" if exercise["status"] != "passed" else "passed"}]
        not_passed = sum(check["status"] != "passed" for check in rows)
        assert int(suite.get("tests", "-1")) == len(rows)
        counted = sum(int(suite.get(key, "0")) for key in ("failures", "errors", "skipped"))
        assert counted == not_passed
        if exercise["status"] == "missing":
            assert suite.get("skipped") == "0" and int(suite.get("failures", "0")) == len(rows)
    graded = sum(len(e["checks"]) or 1 for e in report["exercises"])
    extra = 1 if report["problems"] or not report["exercises"] else 0
    assert int(root.get("tests", "-1")) == graded + extra
    if report["score"] < report["max_score"] or not report["exercises"]:
        assert int(root.get("failures", "0")) + int(root.get("errors", "0")) > 0


def test_junit_nothing_attempted_fails_the_run() -> None:
    root = ET.fromstring(format_junit(case_nothing()))
    assert root.get("failures") == "1"


# --- Gradescope ---------------------------------------------------------------------------------

GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
GRADESCOPE_FORMATS = {"text", "html", "simple_format", "md", "ansi"}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_gradescope_has_the_keys_gradescope_requires(case: str) -> None:
    report = CASES[case]()
    results = json.loads(format_gradescope(report))
    assert isinstance(results["score"], float) and results["score"] == report.score
    assert results["output_format"] in GRADESCOPE_FORMATS
    assert results["test_output_format"] in GRADESCOPE_FORMATS
    numbers = [test["number"] for test in results["tests"]]
    assert len(numbers) == len(set(numbers))
    for test in results["tests"]:
        assert {"name", "number", "tags", "score", "max_score", "status", "output", "visibility"} <= set(test)
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in GRADESCOPE_VISIBILITY
        assert 0 <= test["score"] <= test["max_score"]
        assert test["output"]
    assert sum(test["max_score"] for test in results["tests"]) == report.max_score


def test_gradescope_maps_visibility_to_what_gradescope_does() -> None:
    tests = {t["name"].split(" / ")[1]: t for t in json.loads(format_gradescope(case_failed()))["tests"]}
    assert tests["rows-sum-to-one"]["visibility"] == "visible"
    # hidden means "not before submitting": on Gradescope its reason reaches learners once grades are published
    assert tests["non-negative"]["visibility"] == "after_published"
    assert tests["invariant-to-shift"]["visibility"] == "after_due_date"
    assert tests["leaves-input-unchanged"]["visibility"] == "after_published"
    assert tests["invariant-to-shift"]["extra_data"]["status"] == "timeout"


def test_gradescope_hidden_is_never_shown_when_the_spec_says_so() -> None:
    results = json.loads(format_gradescope(case_failed(), hidden_as={"stable-softmax": "hidden"}))
    tests = {t["name"].split(" / ")[1]: t for t in results["tests"]}
    assert tests["non-negative"]["visibility"] == "hidden"
    # a check whose own visibility names a time keeps it; a public one stays visible
    assert tests["leaves-input-unchanged"]["visibility"] == "after_published"
    assert tests["rows-sum-to-one"]["visibility"] == "visible"
    assert "1 is counted in your score but never shown" in results["output"]


@pytest.mark.parametrize("word", ["after_published", "hidden"])
def test_gradescope_hidden_setting_comes_from_the_exercise_spec(word: str) -> None:
    from types import SimpleNamespace

    from grader.report.gradescope import hidden_checks_on_gradescope

    catalog = SimpleNamespace(exercises={"stable-softmax": SimpleNamespace(gradescope_hidden=word)})
    results = json.loads(render(case_failed(), "gradescope", catalog=catalog))
    tests = {t["name"].split(" / ")[1]: t for t in results["tests"]}
    assert tests["non-negative"]["visibility"] == word
    assert hidden_checks_on_gradescope(catalog) == {"stable-softmax": word}


def test_gradescope_unknown_visibility_is_never_shown() -> None:
    from grader.report.gradescope import gradescope_visibility

    assert gradescope_visibility("instructors-only") == "hidden"
    assert gradescope_visibility("hidden", hidden_as="hidden") == "hidden"
    assert gradescope_visibility("public", hidden_as="hidden") == "visible"


def test_gradescope_spec_setting_is_validated() -> None:
    from grader.spec.models import QuizExercise

    base = {
        "id": "q",
        "kind": "quiz",
        "title": "Q",
        "questions": [
            {
                "id": "a",
                "type": "numeric",
                "prompt": "?",
                "answer": 1.0,
                "tolerance": 0.1,
                "reason_correct": "yes",
                "reason_wrong": "no",
            }
        ],
    }
    assert QuizExercise.model_validate(base).gradescope_hidden == "after_published"
    assert QuizExercise.model_validate({**base, "gradescope_hidden": "hidden"}).gradescope_hidden == "hidden"
    with pytest.raises(ValueError):
        QuizExercise.model_validate({**base, "gradescope_hidden": "never"})


def test_gradescope_summary_gives_nothing_hidden_away() -> None:
    summary = json.loads(format_gradescope(case_failed()))["output"]
    assert "non-negative" not in summary and "Score:" not in summary
    assert "1 of 3 visible checks passed" in summary


def test_gradescope_summary_says_when_gradescope_shows_the_rest() -> None:
    summary = json.loads(format_gradescope(case_failed()))["output"]
    assert "2 more checks are shown once grades are published, 1 after the due date." in summary
    assert "released" not in summary and "never" not in summary


def test_gradescope_top_level_visibility_fields_and_no_execution_time() -> None:
    for case in CASES.values():
        results = json.loads(format_gradescope(case()))
        assert results["visibility"] == "visible" and results["stdout_visibility"] == "hidden"
        # a measured time would make the same submission give different bytes; the bundle adds it
        assert "execution_time" not in results


def test_gradescope_tests_carry_number_and_exercise_tag() -> None:
    results = json.loads(format_gradescope(case_missing()))
    assert [(t["number"], t["tags"]) for t in results["tests"]] == [
        ("1.1", ["why-softmax-quiz"]),
        ("1.2", ["why-softmax-quiz"]),
        ("2.1", ["stable-softmax"]),
    ]


def test_gradescope_extra_data_names_the_sandbox_tier() -> None:
    assert json.loads(format_gradescope(case_passed()))["extra_data"]["sandbox_tier"] == "A"


# --- Markdown -----------------------------------------------------------------------------------


def test_markdown_output_fence_cannot_be_closed_from_inside() -> None:
    lines = format_markdown(case_hostile()).split("\n")
    opening = lines.index("What your code printed:") + 2
    fence = lines[opening].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) > 4
    closing = lines.index(fence, opening + 1)
    inside = lines[opening + 1 : closing]
    assert "```" in inside and "````text" in inside and "<script>alert(1)</script>" in inside
    assert not any(line.strip().startswith(fence) for line in inside)


def test_markdown_escapes_markup_outside_code() -> None:
    text = format_markdown(case_hostile())
    outside = re.sub(r"(`+).*?\1", "", text.split("````", 1)[0])  # code spans show their text literally
    assert "<script>" not in outside and "<b>" not in outside and "<i>" not in outside
    assert "&lt;/failure&gt;" in outside and "\\*pipes\\*" in outside and "http://" not in outside
    assert "\x1b" not in text and "\x00" not in text
    table_row = next(line for line in text.splitlines() if line.startswith("| stable"))
    assert table_row.count(" | ") == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "`plain`"),
        ("a`b", "``a`b``"),
        ("`x`", "`` `x` ``"),
        ("a ``` b", "````a ``` b````"),
    ],
    ids=["plain", "one-backtick", "edge-backticks", "triple"],
)
def test_markdown_code_span_outlasts_backticks(text: str, expected: str) -> None:
    assert markdown_code(text) == expected


def test_markdown_text_is_one_line_without_markup() -> None:
    assert markdown_text("a\n# b <i>&</i> *c*") == "a \\# b &lt;i&gt;&amp;&lt;/i&gt; \\*c\\*"


def test_markdown_fence_is_longer_than_any_backtick_run() -> None:
    assert markdown_fence("x\n`````\ny")[0] == "``````text"
    assert markdown_fence("plain")[0] == "```text"


# --- live: grader grade --format ... -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "status"),
    [("solutions/stable-softmax/reference.py", 0), ("solutions/stable-softmax/wrong_global_max.py", 1)],
    ids=["reference", "global-max"],
)
def test_grade_cli_renders_every_new_format(path: str, status: int, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from grader.cli import main

    runner = CliRunner()
    outputs = {}
    for format_name in ("junit", "gradescope", "markdown"):
        target = tmp_path / f"out.{format_name}"
        result = runner.invoke(
            main, ["grade", path, "--exercise", "stable-softmax", "--format", format_name, "--output", str(target)]
        )
        assert result.exit_code == status, result.output
        outputs[format_name] = target.read_text(encoding="utf-8")
    suites = ET.fromstring(outputs["junit"].encode("utf-8"))
    assert suites.get("tests") == "13" and (suites.get("failures") == "0") == (status == 0)
    results = json.loads(outputs["gradescope"])
    assert (results["score"] == 15.0) == (status == 0) and len(results["tests"]) == 13
    heading = outputs["markdown"].splitlines()[0]
    assert heading.startswith("# Grading results: ") and heading.endswith(" / 15 points")
    if status:
        assert "matches-reference-on-extremes" in outputs["markdown"]
        assert suites.find(".//testcase[@name='matches-reference-on-extremes']/failure") is not None
    again = runner.invoke(main, ["grade", path, "--exercise", "stable-softmax", "--format", "junit"])
    assert again.output == outputs["junit"]
