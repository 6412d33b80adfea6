"""``grader new``: a commented skeleton that loads, says it is a stub, and validates once the reference is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.spec.loader import load_catalog

SIGMOID = (
    "import numpy as np\n\n\ndef stable_sigmoid(x):\n    x = np.asarray(x, dtype=float)\n"
    "    return np.exp(-np.logaddexp(0.0, -x))\n"
)


def grader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADER_EXERCISES", raising=False)
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "exercises").mkdir()
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    return tmp_path


def test_new_implementation_writes_spec_reference_and_known_wrong(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = grader(project, monkeypatch, "new", "stable-sigmoid", "--kind", "implementation")
    assert code == 0, err
    for name in (
        "exercises/stable-sigmoid.yaml",
        "solutions/stable-sigmoid/reference.py",
        "solutions/stable-sigmoid/wrong_mutates_input.py",
    ):
        assert (project / name).is_file() and f"wrote {name}" in out
    spec = (project / "exercises/stable-sigmoid.yaml").read_text()
    assert spec.count("\n#") >= 5  # commented for the author
    exercise = load_catalog(project / "exercises").exercise("stable-sigmoid")
    assert list(exercise.entries) == ["stable_sigmoid"]
    assert exercise.reference_solution == "solutions/stable-sigmoid/reference.py"


def test_new_quiz_writes_a_spec_that_loads(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = grader(project, monkeypatch, "new", "sigmoid-quiz", "--kind", "quiz")
    assert code == 0, err
    quiz = load_catalog(project / "exercises").exercise("sigmoid-quiz")
    assert [q.type for q in quiz.questions] == ["single", "multiple", "numeric"]
    assert not (project / "solutions").exists()


@pytest.mark.parametrize("kind", ["implementation", "quiz"])
def test_new_refuses_an_existing_id_and_writes_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    (project / "exercises/taken.yaml").write_text("id: taken-id\nkind: assignment\ntitle: T\nexercises: [x]\n")
    before = sorted(p.name for p in project.rglob("*"))
    code, _, err = grader(project, monkeypatch, "new", "taken", "--kind", kind)
    assert code == 2 and err.startswith("grader: error: ") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert sorted(p.name for p in project.rglob("*")) == before


def test_new_refuses_an_id_another_file_uses(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grader(project, monkeypatch, "new", "first-quiz", "--kind", "quiz")
    (project / "exercises/first-quiz.yaml").rename(project / "exercises/renamed.yaml")
    code, _, err = grader(project, monkeypatch, "new", "first-quiz", "--kind", "quiz")
    assert code == 2 and "'first-quiz' is already used" in err


@pytest.mark.parametrize("bad", ["Stable Sigmoid", "2d-softmax", "lambda"], ids=["not-kebab", "digit", "keyword"])
def test_new_refuses_an_id_that_cannot_name_the_function(
    project: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    code, _, err = grader(project, monkeypatch, "new", bad, "--kind", "implementation")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert not list((project / "exercises").iterdir())


@pytest.mark.slow
def test_new_exercise_validates_once_the_reference_is_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grader(project, monkeypatch, "new", "stable-sigmoid", "--kind", "implementation")
    code, out, _ = grader(project, monkeypatch, "validate", "--exercise", "stable-sigmoid")
    assert code == 1
    assert (
        "PROBLEM stable-sigmoid reference solutions/stable-sigmoid/reference.py: is still a stub "
        "(stable_sigmoid() only raises NotImplementedError)"
    ) in out
    (project / "solutions/stable-sigmoid/reference.py").write_text(SIGMOID)
    code, out, _ = grader(project, monkeypatch, "validate", "--exercise", "stable-sigmoid")
    assert code == 0, out
    assert "ok      stable-sigmoid reference solutions/stable-sigmoid/reference.py: passes all" in out
    assert "ok      stable-sigmoid known-wrong mutates-input" in out


@pytest.mark.slow
def test_new_quiz_validates_as_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grader(project, monkeypatch, "new", "sigmoid-quiz", "--kind", "quiz")
    code, out, _ = grader(project, monkeypatch, "validate", "--exercise", "sigmoid-quiz")
    assert code == 0, out


def test_new_class_writes_a_class_entry_with_scripts(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = grader(project, monkeypatch, "new", "running-total", "--kind", "class")
    assert code == 0, err
    assert "wrote solutions/running-total/wrong_shared_state.py" in out
    exercise = load_catalog(project / "exercises").exercise("running-total")
    entry = exercise.entries["RunningTotal"]  # type: ignore[union-attr]
    assert entry.kind == "class" and entry.methods == ["add(x)"] and entry.attributes == ["total"]


@pytest.mark.slow
def test_new_class_validates_once_the_reference_is_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grader(project, monkeypatch, "new", "running-total", "--kind", "class")
    code, out, _ = grader(project, monkeypatch, "validate", "--exercise", "running-total")
    assert code == 1
    assert "is still a stub (RunningTotal() only raises NotImplementedError)" in out
    (project / "solutions/running-total/reference.py").write_text(
        "class RunningTotal:\n    def __init__(self):\n        self.values = []\n\n"
        "    def add(self, x):\n        self.values.append(x)\n\n"
        "    @property\n    def total(self):\n        return float(sum(self.values))\n"
    )
    code, out, _ = grader(project, monkeypatch, "validate", "--exercise", "running-total")
    assert code == 0, out
    assert "ok      running-total known-wrong shared-state" in out
