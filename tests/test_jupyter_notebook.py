"""``grader.check`` in a real notebook, run by nbclient in an ipykernel: the output cell shows the result.

The learner imports the grader, defines ``softmax`` in a cell that then
raises (the kernel keeps the function), and runs the handout README's
``grader.check`` cell; the test reads the outputs as Jupyter would show them, and checks
the score shown against the same code graded as a file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_release import build_project

from grader.authoring.release import release_handout
from grader.grading import grade_submission
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "stable-softmax"


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("handout")
    release_handout(load_catalog(build_project(base)), out=base / "handout")
    return base / "handout"


def _readme_check(handout: Path) -> str:
    """The notebook cell the handout's README tells learners to run."""
    block = re.search(r"```python\n(.*?)```", (handout / "README.md").read_text(encoding="utf-8"), flags=re.DOTALL)
    assert block is not None
    return block.group(1)


@pytest.mark.slow
@pytest.mark.parametrize("solution", ["reference.py", "wrong_no_max_shift.py"], ids=["correct", "buggy"])
def test_check_in_a_notebook_shows_html_and_text(handout: Path, tmp_path: Path, monkeypatch, solution: str) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))  # connection files stay in the test's folder
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    code = (SOLUTIONS / solution).read_text(encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import grader"),
        nbformat.v4.new_code_cell(f"{code}\nsoftmax(not_defined_yet)"),  # defines softmax, then raises
        nbformat.v4.new_code_cell(_readme_check(handout)),
    ]
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(handout)}},
    )
    client.execute()
    (shown,) = [output for output in notebook.cells[2].outputs if output.output_type == "execute_result"]
    page, text = shown.data["text/html"], shown.data["text/plain"]
    as_file = grade_submission(
        SOLUTIONS / solution, exercises=["stable-softmax"], exercises_dir=handout / "public-checks", public_only=True
    )
    (total,) = re.findall(r"^Total: ([\d.]+)/([\d.]+)$", text, flags=re.MULTILINE)
    assert (float(total[0]), float(total[1])) == (as_file.score, as_file.max_score)
    assert page.startswith('<pre class="grader-report"') and f"Total: {total[0]}/{total[1]}</pre>" in page
    assert "Graded the code this kernel ran: 3 cells (In [1] to In [3])" in text
    assert "cells that only import or call the grader were left out: In [1], In [3]." in text
    assert "In [2] raised an exception when it ran, so it runs here the same way" in " ".join(text.split())
