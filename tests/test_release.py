"""``grader release``: the learner handout holds everything a learner needs and nothing secret.

The secret scans here are written independently of ``grader.authoring.leaks`` (the
release's own guard), so one bug cannot hide in both. A temporary catalog
adds canaries (a hidden check, a hidden-only case set, a misconception, an
option reason, each with a unique marker) so their absence proves something.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from grader.authoring.release import MARKER, release_handout
from grader.cli import main
from grader.errors import SpecError, UsageError
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import ChoiceQuestion, ImplementationExercise, NumericQuestion, QuizExercise
from grader.submission.answers import load_answers

ROOT = Path(__file__).resolve().parents[1]
CANARIES = (
    "canary-hidden-check",
    "canary-only-cases",
    "987654.125",
    "CANARY HIDDEN HINT",
    "CANARY MISCONCEPTION",
    "CANARY OPTION REASON",
    "wrong_canary.py",
)


def build_project(tmp_path: Path) -> Path:
    """stable-softmax, why-softmax-quiz and the why-softmax assignment, with canaries; returns exercises/."""
    exercises = tmp_path / "project" / "exercises"
    exercises.mkdir(parents=True)
    shutil.copytree(ROOT / "solutions" / "stable-softmax", tmp_path / "project" / "solutions" / "stable-softmax")
    shutil.copy(
        ROOT / "solutions/stable-softmax/wrong_global_max.py",
        tmp_path / "project/solutions/stable-softmax/wrong_canary.py",
    )
    spec = yaml.safe_load((ROOT / "exercises/stable-softmax.yaml").read_text(encoding="utf-8"))
    spec["cases"]["canary-only-cases"] = [{"examples": [{"z": [987654.125, 1.0]}]}]
    spec["checks"].append(
        {
            "id": "canary-hidden-check",
            "property": "finite",
            "cases": ["canary-only-cases"],
            "hint": "CANARY HIDDEN HINT: look at the canary.",
        }
    )
    spec["known_wrong"].append(
        {
            "id": "canary",
            "path": "solutions/stable-softmax/wrong_canary.py",
            "misconception": "CANARY MISCONCEPTION about the global maximum.",
            "must_fail": ["matches-reference-on-extremes"],
        }
    )
    (exercises / "stable-softmax.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    quiz = yaml.safe_load((ROOT / "exercises/why-softmax-quiz.yaml").read_text(encoding="utf-8"))
    quiz["questions"][0]["options"][1]["reason"] = "CANARY OPTION REASON: dividing by the sum gives a sum of one."
    (exercises / "why-softmax-quiz.yaml").write_text(yaml.safe_dump(quiz, sort_keys=False), encoding="utf-8")
    (exercises / "why-softmax.yaml").write_text(
        "id: why-softmax\nkind: assignment\ntitle: Why softmax\nexercises: [why-softmax-quiz, stable-softmax]\n",
        encoding="utf-8",
    )
    return exercises


@pytest.fixture
def project(tmp_path: Path) -> Catalog:
    return load_catalog(build_project(tmp_path))


def released_texts(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()}


def secret_findings(catalog: Catalog, texts: dict[str, str]) -> list[str]:
    """Every secret of ``catalog`` found in the released texts (independent of grader.authoring.leaks)."""

    def squash(text: str) -> str:
        return " ".join(text.split())

    flat = {name: squash(text) for name, text in texts.items()}
    found = []

    def absent(what: str, needle: str, names=None) -> None:
        needle = squash(needle)
        for name in names or flat:
            if needle and needle in flat[name]:
                found.append(f"{what} in {name}")

    for name, text in texts.items():
        if re.search(r"(?m)^[\s-]*correct\s*:", text) or "correct: true" in text:
            found.append(f"'correct:' in {name}")
        if re.search(r"(?m)^\s*(known_wrong|reference_solution|misconception|must_fail)\s*:", text):
            found.append(f"a secret key in {name}")
    for exercise in catalog.exercises.values():
        if isinstance(exercise, QuizExercise):
            for question in exercise.questions:
                if isinstance(question, ChoiceQuestion):
                    for option in question.options:
                        absent("an option reason", option.reason)
                elif isinstance(question, NumericQuestion):
                    mistakes = [m.reason for m in question.mistakes]
                    for reason in (question.reason_correct, question.reason_wrong, *mistakes):
                        absent("a numeric reason", reason)
            continue
        assert isinstance(exercise, ImplementationExercise)
        own = [name for name in flat if Path(name).stem == exercise.id]
        for check in exercise.checks:
            if check.visibility != "public":
                for form in (f"id: {check.id}\n", f"`{check.id}`", f"- {check.id}:"):
                    absent(f"hidden check id {check.id}", form, own)
                if len(check.hint) > 20:
                    absent(f"hint of hidden check {check.id}", check.hint, own)
        for wrong in exercise.known_wrong:
            absent("a known-wrong path", wrong.path)
            absent("a known-wrong file name", Path(wrong.path).name)
            absent("a misconception", wrong.misconception)
        if exercise.reference_solution:
            absent("the reference path", exercise.reference_solution)
            source = catalog.resolve(exercise.reference_solution).read_text(encoding="utf-8")
            absent("the reference solution", source)
            for line in source.splitlines():
                if ("=" in line or "return" in line) and not line.lstrip().startswith("def "):
                    absent("a line of the reference solution", line)
    return found


def test_release_reveals_no_secret_of_the_canary_catalog(project: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "handout"
    written = release_handout(project, out=out)
    texts = released_texts(out)
    assert sorted(texts) == written
    for canary in CANARIES:
        assert not [name for name, text in texts.items() if canary in text], canary
    assert secret_findings(project, texts) == []


def test_release_reveals_no_secret_of_the_real_catalog(catalog: Catalog, tmp_path: Path) -> None:
    release_handout(catalog, out=tmp_path / "handout")
    assert secret_findings(catalog, released_texts(tmp_path / "handout")) == []


def test_release_writes_pages_stubs_answers_and_public_checks(project: Catalog, tmp_path: Path) -> None:
    written = release_handout(project, out=tmp_path / "handout")
    assert written == sorted(
        [
            MARKER,
            "README.md",
            "answers.yaml",
            "stable-softmax.md",
            "stable-softmax.py",
            "why-softmax-quiz.md",
            "public-checks/stable-softmax.answers.json",
            "public-checks/quizzes.json",
            "public-checks/stable-softmax.yaml",
            "public-checks/why-softmax.yaml",
        ]
    )
    page = (tmp_path / "handout/stable-softmax.md").read_text()
    assert "def softmax(z, axis=-1):" in page and ">>> softmax(np.array([1.0, 2.0, 3.0]))" in page
    assert "- `matches-reference` (2 points):" in page and "- `rows-sum-to-one` (1 point):" in page
    assert "10 more checks run only when your work is graded." in page
    quiz_page = (tmp_path / "handout/why-softmax-quiz.md").read_text()
    assert "## exp-first" in quiz_page and "- E. it is linear" in quiz_page


def test_release_stub_has_the_signatures_and_raises_not_implemented(project: Catalog, tmp_path: Path) -> None:
    release_handout(project, out=tmp_path / "handout")
    source = (tmp_path / "handout/stable-softmax.py").read_text()
    tree = ast.parse(source)
    (function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert function.name == "softmax" and [a.arg for a in function.args.args] == ["z", "axis"]
    assert ast.get_docstring(function).startswith("Return an array of the same shape as z.")
    assert "stable-softmax: A softmax that never overflows" in ast.get_docstring(tree)
    spec = importlib.util.spec_from_file_location("stub", tmp_path / "handout/stable-softmax.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(NotImplementedError):
        module.softmax([1.0])


def test_release_answers_template_lists_every_question_unanswered(project: Catalog, tmp_path: Path) -> None:
    release_handout(project, out=tmp_path / "handout")
    answers = load_answers(tmp_path / "handout/answers.yaml")
    quiz = project.exercises["why-softmax-quiz"]
    assert answers == {"why-softmax-quiz": {q.id: None for q in quiz.questions}}
    text = (tmp_path / "handout/answers.yaml").read_text()
    assert "  #   A. non-negative\n" in text and "  #   E. it is linear\n" in text


def test_release_public_checks_load_with_only_public_checks(project: Catalog, tmp_path: Path) -> None:
    release_handout(project, out=tmp_path / "handout")
    public = load_catalog(tmp_path / "handout/public-checks")
    exercise = public.exercises["stable-softmax"]
    assert isinstance(exercise, ImplementationExercise)
    assert [c.id for c in exercise.checks] == [
        "computes-the-right-values",
        "matches-reference",
        "rows-sum-to-one",
        "default-axis-is-last",
    ]
    assert set(exercise.cases) == {"simple", "basic", "non-square", "float32", "extreme", "default-axis"}
    assert exercise.reference_solution is None and exercise.known_wrong == []
    assert public.assignments["why-softmax"].exercises == ["stable-softmax"]


def test_release_is_byte_identical_twice(project: Catalog, tmp_path: Path) -> None:
    release_handout(project, out=tmp_path / "one")
    release_handout(project, out=tmp_path / "two")
    assert released_texts(tmp_path / "one") == released_texts(tmp_path / "two")


@pytest.mark.slow
def test_release_public_checks_grade_the_reference_with_exit_0(project: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "handout"
    release_handout(project, out=out)
    result = CliRunner().invoke(
        main, ["--exercises", str(out / "public-checks"), "grade", "solutions/stable-softmax/reference.py", "--public"]
    )
    assert result.exit_code == 0, result.output
    assert "PASS matches-reference" in result.output and "Total: 5/5" in result.output
    stub = CliRunner().invoke(
        main, ["--exercises", str(out / "public-checks"), "grade", str(out / "stable-softmax.py"), "--public"]
    )
    assert stub.exit_code == 1 and "NotImplementedError" in stub.output


def test_release_refuses_a_folder_that_is_not_empty(project: Catalog, tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy/notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        release_handout(project, out=tmp_path / "busy", replace=True)
    assert (tmp_path / "busy/notes.txt").read_text() == "mine"


def test_release_replace_overwrites_only_an_earlier_handout(project: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "handout"
    release_handout(project, out=out)
    (out / "stale.md").write_text("old")
    with pytest.raises(UsageError, match="--replace"):
        release_handout(project, out=out)
    release_handout(project, out=out, replace=True)
    assert not (out / "stale.md").exists() and (out / MARKER).is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".handout.")]  # no temporary folder left


def test_release_guard_stops_a_prompt_that_quotes_a_misconception(tmp_path: Path) -> None:
    exercises = build_project(tmp_path)
    path = exercises / "stable-softmax.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["prompt"] += "\nCANARY MISCONCEPTION about the global maximum.\n"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(SpecError, match="misconception of known-wrong 'canary'"):
        release_handout(load_catalog(exercises), out=tmp_path / "handout")
    assert not (tmp_path / "handout").exists()


def test_release_cli_writes_the_handout_and_exits_0(tmp_path: Path) -> None:
    exercises = build_project(tmp_path)
    result = CliRunner().invoke(main, ["--exercises", str(exercises), "release", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote 10 files to ")
    again = CliRunner().invoke(main, ["--exercises", str(exercises), "release", "--out", str(tmp_path / "out")])
    assert again.exit_code == 2 and "pass --replace" in again.output


@pytest.mark.slow
def test_release_assignment_self_tests_then_writes_only_its_exercises(tmp_path: Path) -> None:
    exercises = build_project(tmp_path)
    (exercises / "extra-quiz.yaml").write_text(
        (ROOT / "exercises/softmax-bridge-quiz.yaml")
        .read_text()
        .replace("id: softmax-bridge-quiz", "id: extra-quiz", 1)
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["--exercises", str(exercises), "release", "--assignment", "why-softmax", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "stable-softmax.py").is_file() and (out / "public-checks/why-softmax.yaml").is_file()
    assert not (out / "extra-quiz.md").exists() and "extra-quiz" not in (out / "answers.yaml").read_text()


@pytest.mark.slow
def test_release_assignment_refuses_one_that_fails_validation_unless_forced(tmp_path: Path) -> None:
    exercises = build_project(tmp_path)
    shutil.copy(
        ROOT / "solutions/stable-softmax/wrong_global_max.py",
        tmp_path / "project/solutions/stable-softmax/reference.py",
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["--exercises", str(exercises), "release", "--assignment", "why-softmax", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        "grader: error: assignment 'why-softmax' fails validation: stable-softmax "
        "reference solutions/stable-softmax/reference.py: fails "
    )
    assert "--force" in result.stderr and not out.exists()
    forced = CliRunner().invoke(
        main, ["--exercises", str(exercises), "release", "--assignment", "why-softmax", "--out", str(out), "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert (out / "stable-softmax.py").is_file()


def test_release_assignment_unknown_is_usage_error(tmp_path: Path) -> None:
    exercises = build_project(tmp_path)
    result = CliRunner().invoke(
        main, ["--exercises", str(exercises), "release", "--assignment", "why-sofmax", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2 and "did you mean 'why-softmax'?" in result.stderr


@pytest.mark.slow
def test_release_assignment_handout_holds_no_solution_hidden_case_or_answer_key(tmp_path: Path) -> None:
    from grader.authoring.leaks import find_leaks

    exercises = build_project(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["--exercises", str(exercises), "release", "--assignment", "why-softmax", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    catalog = load_catalog(exercises)
    texts = released_texts(out)
    assert find_leaks(catalog, texts) == []  # the release's own scan, on what reached the disk
    assert secret_findings(catalog, texts) == []  # and the independent one
    assert not [canary for canary in CANARIES for text in texts.values() if canary in text]
    solutions = [p.read_text() for p in (tmp_path / "project/solutions").rglob("*.py")]
    assert not [name for name, text in texts.items() if text in solutions]


@pytest.mark.slow
def test_release_handout_runs_its_public_checks_on_its_own(tmp_path: Path) -> None:
    """In the handout folder, with no repository, no --exercises and no GRADER_EXERCISES: the public checks run."""
    import os
    import subprocess
    import sys

    out = tmp_path / "handout"
    release_handout(load_catalog(build_project(tmp_path)), out=out)
    shutil.rmtree(tmp_path / "project")  # nothing of the repository is left to find
    shutil.copy(ROOT / "solutions/stable-softmax/reference.py", out / "mine.py")
    env = {key: value for key, value in os.environ.items() if key != "GRADER_EXERCISES"}
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", "mine.py", "--public"],
        cwd=out,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Total: 5/5" in done.stdout
    stub = subprocess.run(
        [sys.executable, "-m", "grader.cli", "grade", "stable-softmax.py", "--public"],
        cwd=out,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert stub.returncode == 1 and "NotImplementedError" in stub.stdout
