"""``grader batch --similarity``: the page, the summary's line to it, and nothing of it anywhere a learner reads.

A stand-in executor grades each learner into a report (one hidden check,
failed with the wrong value a comment in the learner's file names), so the
batch runs in a moment; the code the page compares is the learners' own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, make_exercises
from click.testing import CliRunner
from similarity_class import ANA, BEN, CLEO, EVE, NED, STUB

from grader.authoring.handout import handout_code
from grader.batch import run_batch
from grader.batch.similarity import find_similar
from grader.batch.similarity_html import format_similarity_html
from grader.batch.worker import Outcome
from grader.cli import main
from grader.report import render
from grader.results import CheckResult, ExerciseResult, Report
from grader.spec.loader import load_catalog

_GOT = re.compile(r"# got: (.+)")


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


def _report(label: str, source: str) -> Report:
    found = _GOT.search(source)
    check = CheckResult(
        id="rows-sum-to-one",
        status="failed" if found else "passed",
        score=0.0 if found else 1.0,
        max_score=1.0,
        visibility="hidden",
        reason="Checked.",
        input="softmax(z=array([300., 1.]))" if found else None,
        got=found.group(1) if found else None,
    )
    exercise = ExerciseResult(
        id="stable-softmax", status=check.status, score=check.score, max_score=1.0, reason="R.", checks=[check]
    )
    return Report(grader_version="0", submission=label, score=check.score, max_score=1.0, exercises=[exercise])


class _FromComment:
    def __init__(self, config) -> None:
        pass

    def map(self, tasks):
        for task in tasks:
            report = _report(task.label, Path(task.path).read_text(encoding="utf-8"))
            yield task, Outcome(result_json=render(report, "json"))


def _class(base: Path) -> Path:
    folder = base / "class"
    folder.mkdir()
    files = {
        "ana": ANA,
        "ben": BEN,
        "cleo": CLEO + "# got: array([nan, 0.25])\n",
        "eve": EVE + "# got: array([nan, 0.25])\n",
        "ned": NED,
    }
    for name, text in files.items():
        (folder / f"{name}.py").write_text(STUB + "\n" + text, encoding="utf-8")
    return folder


def _run(folder: Path, out: Path, exercises: Path, **options):
    return run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_FromComment, exercises_dir=exercises, **options)


def test_similarity_page_lists_the_pairs_and_the_summary_points_to_it(exercises, tmp_path) -> None:
    folder = _class(tmp_path)
    out = tmp_path / "out"
    stubs = handout_code(load_catalog(exercises), ASSIGNMENT)
    _run(folder, out, exercises, similarity=[*stubs, STUB])  # the files here start from STUB too
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "Evidence to look at, not a verdict." in page
    assert re.search(r"<td>ana</td><td>ben</td>", page)
    assert re.search(r"<td>cleo</td><td>eve</td>", page), "the pair sharing a wrong value at a hidden input"
    assert "array([nan, 0.25])" in page and "<td>ned</td>" not in page
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "[similarity.html](similarity.html)" in summary and "not a verdict" in summary


def test_similarity_changes_no_grade_and_reaches_no_learner(exercises, tmp_path) -> None:
    folder = _class(tmp_path)
    plain, similar = tmp_path / "plain", tmp_path / "similar"
    _run(folder, plain, exercises)
    _run(folder, similar, exercises, similarity=[STUB])
    assert not (plain / "similarity.html").exists()
    assert (plain / "gradebook.csv").read_bytes() == (similar / "gradebook.csv").read_bytes()
    for kind in ("results", "feedback"):
        for path in sorted((similar / kind).iterdir()):
            assert path.read_bytes() == (plain / kind / path.name).read_bytes(), path
    assert "similar" not in (plain / "summary.md").read_text(encoding="utf-8").lower()


def test_a_run_without_the_option_removes_the_earlier_page(exercises, tmp_path) -> None:
    folder, out = _class(tmp_path), tmp_path / "out"
    _run(folder, out, exercises, similarity=[STUB])
    assert (out / "similarity.html").is_file()
    _run(folder, out, exercises)
    assert not (out / "similarity.html").exists()
    assert "similarity.html" not in (out / "summary.md").read_text(encoding="utf-8")


def test_handout_code_is_every_stub_of_the_assignment(exercises) -> None:
    stubs = handout_code(load_catalog(exercises), ASSIGNMENT)
    assert len(stubs) == 1 and "def softmax(z, axis=-1):" in stubs[0] and "NotImplementedError" in stubs[0]


def test_the_page_escapes_learner_names_and_code() -> None:
    code = {
        "<script>x</script>": {"a.py": ANA + "\n# </pre><script>alert(1)</script>\n"},
        "b&b": {"a.py": BEN},
    }
    page = format_similarity_html(find_similar(code), code, title="T <i>")
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "b&amp;b" in page and "T &lt;i&gt;" in page


def test_the_page_says_so_when_no_pair_is_listed() -> None:
    code = {"a": {"a.py": "x = 1\n"}, "b": {"a.py": "def f():\n    return [2] * 3\n"}}
    page = format_similarity_html(find_similar(code), code, title="T")
    assert "No pair of learners shares enough" in page and "not a verdict" in page


@pytest.mark.slow
def test_batch_cli_similarity_leaves_the_handout_stubs_out(exercises, tmp_path) -> None:
    stubs = handout_code(load_catalog(exercises), ASSIGNMENT)
    folder = tmp_path / "class"
    folder.mkdir()
    for name, text in {"ana": ANA, "ben": BEN, "ned": NED}.items():
        (folder / f"{name}.py").write_text(text + "\n\n" + stubs[0], encoding="utf-8")
    out = tmp_path / "o"
    base = ["--exercises", str(exercises), "batch", str(folder), "--assignment", ASSIGNMENT, "--out", str(out)]
    result = CliRunner().invoke(main, [*base, "--jobs", "1", "--similarity"])
    assert result.exit_code == 0, result.output
    assert "similarity.html: pairs of learners alike" in result.output
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<td>ana</td><td>ben</td>" in page and "<td>ned</td>" not in page
    assert "NotImplementedError" not in page, "the stub every learner kept is shown as no passage"
    assert "## Similar work" in (out / "summary.md").read_text(encoding="utf-8")
    assert not any("similar" in path.read_text(encoding="utf-8").lower() for path in (out / "feedback").iterdir())
