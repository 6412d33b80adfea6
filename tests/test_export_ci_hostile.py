"""The exported CI jobs, run here in a fresh venv on a learner's repository built to shadow the grader.

A learner's repository may hold folders named like the packages the job runs
(``pip/``, ``grader/``, ``numpy/``), the files Python or pip read at start-up
(``sitecustomize.py``, ``pip.conf``, ``pyproject.toml``...), or a swapped
grader wheel. Every one of them, if it were used, leaves a mark file or
ends its process with status 0; the jobs must still install the real
grader, grade the real result and leave no mark.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from grader.cli import main
from grader.export.ci import FEEDBACK_NOTE, CiRecipe, install_source
from grader.export.github_actions import github_actions_workflow
from grader.export.gitlab_ci import gitlab_ci_config
from tests.fresh_venv import fresh_venv_env

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = Path(".github/workflows/grade.yml")
FORGED = "FORGED-BY-THE-CHECKOUT"


def _mark(marks: Path, name: str, then: str = "") -> str:
    """Python source that records that the checkout's ``name`` ran, then does ``then``."""
    return (
        "import os, sys\n"
        "try:\n"
        f"    with open(os.path.join({str(marks)!r}, {name!r}), 'a') as stream:\n"
        "        stream.write(' '.join(sys.argv) + '\\n')\n"
        "except OSError:\n"
        "    pass\n"
        f"{then}\n"
    )


def hostile_files(marks: Path) -> dict[str, str]:
    """Files a learner's repository may hold to stand in for pip, the grader or its dependencies."""
    exit_ok = "os._exit(0)"
    return {
        "pip/__init__.py": _mark(marks, "pip"),
        "pip/__main__.py": _mark(marks, "pip", exit_ok),
        "grader/__init__.py": _mark(marks, "grader"),
        "grader/__main__.py": _mark(marks, "grader", exit_ok),
        "grader/cli/commands.py": _mark(marks, "grader", f"print({FORGED!r}); {exit_ok}"),
        "numpy/__init__.py": _mark(marks, "numpy", exit_ok),
        "yaml/__init__.py": _mark(marks, "yaml", exit_ok),
        "click/__init__.py": _mark(marks, "click", exit_ok),
        "sitecustomize.py": _mark(marks, "sitecustomize", exit_ok),
        "usercustomize.py": _mark(marks, "usercustomize", exit_ok),
        "setup.py": _mark(marks, "setup.py", exit_ok),
        "forged.pth": f"import os; open({str(marks / 'pth')!r}, 'a').write('pth')\n",
        "pip.conf": "[global]\nindex-url = http://127.0.0.1:9/simple\nno-index = false\n",
        "setup.cfg": "[metadata]\nname = grader\nversion = 99\n",
        "pyproject.toml": '[build-system]\nrequires = ["forged-backend"]\n[project]\nname = "grader"\nversion = "99"\n',
    }


@pytest.fixture(scope="module")
def learner_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handout with a softmax that overflows filled in, before any export is written into it."""
    repo = tmp_path_factory.mktemp("learner") / "repo"
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "release", "--out", str(repo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    shutil.copy(ROOT / "solutions/stable-softmax/wrong_no_max_shift.py", repo / "stable-softmax.py")
    return repo


@pytest.fixture(scope="module")
def job_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A runner's environment: ``python`` a fresh venv without the grader, pip offline."""
    return fresh_venv_env(tmp_path_factory.mktemp("runner"))


def _hostile_copy(learner_repo: Path, tmp_path: Path, kind: str) -> tuple[Path, Path]:
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    shutil.copytree(learner_repo, repo)
    marks.mkdir()
    result = CliRunner().invoke(main, ["export", kind, "--out", str(repo), "--assignment", "why-softmax"])
    assert result.exit_code == 0, result.output
    for name, text in hostile_files(marks).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo, marks


def _run(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH pointing into the checkout is what a job would need to import from it: isolated mode ignores it.
    env = {**env, "PYTHONPATH": str(repo)}
    return subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def _step_outputs(path: Path) -> dict[str, str]:
    """The step outputs written to ``$GITHUB_OUTPUT`` so far (``name=value`` lines)."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}


def _installed_cli(env: dict[str, str]) -> str:
    done = subprocess.run(
        ["python", "-I", "-c", "import grader.cli; print(open(grader.cli.__file__).read())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    return done.stdout


@pytest.mark.slow
def test_github_job_in_a_hostile_checkout_installs_and_grades_the_real_grader(
    learner_repo: Path, job_env: dict[str, str], tmp_path: Path
) -> None:
    repo, marks = _hostile_copy(learner_repo, tmp_path, "github-actions")
    job = yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]["grade"]
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    env = {**job_env, **job["env"], "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    for step in job["steps"]:
        if "run" not in step:
            continue
        env["STATUS"] = _step_outputs(outputs).get("status", "")
        done = _run(step["run"], repo, env)
        expected = 1 if step is job["steps"][-1] else 0  # the last step fails the job: the score is low
        assert done.returncode == expected, (step.get("name"), done.stdout[-2000:], done.stderr[-2000:])
        assert FORGED not in done.stdout
    assert sorted(path.name for path in marks.iterdir()) == []
    assert _step_outputs(outputs) == {"started": "true", "status": "1"}  # begun: the handout's stub was replaced
    junit = (repo / "grader-results" / "junit.xml").read_text()
    assert "<failure" in junit and "1000." in junit  # the overflow the buggy softmax really has
    assert summary.read_text().startswith("# Grading results: ") and FEEDBACK_NOTE in summary.read_text()
    assert FORGED not in _installed_cli(job_env)


@pytest.mark.slow
def test_gitlab_job_in_a_hostile_checkout_installs_and_grades_the_real_grader(
    learner_repo: Path, job_env: dict[str, str], tmp_path: Path
) -> None:
    repo, marks = _hostile_copy(learner_repo, tmp_path, "gitlab-ci")
    job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["grade"]
    done = _run("\n".join(job["script"]), repo, {**job_env, **job["variables"]})
    assert done.returncode == 1, (done.stdout[-2000:], done.stderr[-2000:])
    assert "below the minimum" in done.stdout and FEEDBACK_NOTE in done.stdout and FORGED not in done.stdout
    assert sorted(path.name for path in marks.iterdir()) == []
    assert "1000." in (repo / "grader-results" / "junit.xml").read_text()


def _swapped(wheel: Path) -> bytes:
    """The wheel with its command line replaced by one that passes everything."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(buffer, "w") as forged:
        for info in original.infolist():
            data = original.read(info)
            if info.filename == "grader/cli/commands.py":
                data = f"def run():\n    print({FORGED!r})\n\nif __name__ == '__main__':\n    run()\n".encode()
            forged.writestr(info, data)
    return buffer.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["github-actions", "gitlab-ci"], ids=["github", "gitlab"])
def test_a_swapped_wheel_is_refused_by_its_hash(
    kind: str, learner_repo: Path, job_env: dict[str, str], tmp_path: Path
) -> None:
    repo, _marks = _hostile_copy(learner_repo, tmp_path, kind)
    if kind == "github-actions":
        job = yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]["grade"]
        variables, install = job["env"], next(s["run"] for s in job["steps"] if "pip install" in s.get("run", ""))
    else:
        job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["grade"]
        variables, install = job["variables"], next(line for line in job["script"] if "pip install" in line)
    wheel = repo / variables["GRADER_INSTALL"]
    wheel.write_bytes(_swapped(wheel))
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() != variables["GRADER_WHEEL_SHA256"]
    done = _run(install, repo, {**job_env, **variables})
    assert done.returncode != 0 and "hash" in done.stderr.lower(), done.stderr[-2000:]
    assert FORGED not in done.stdout and FORGED not in _installed_cli(job_env)


# --- what the export writes, read without running it ---------------------------------------------------


def _commands(text: str) -> list[str]:
    """Every shell line of a workflow or a .gitlab-ci.yml."""
    data: Any = yaml.safe_load(text)
    if "jobs" in data:
        runs = [step.get("run", "") for step in data["jobs"]["grade"]["steps"]]
    else:
        runs = data["grade"]["script"]
    return [line.strip() for run in runs for line in run.splitlines() if line.strip()]


@pytest.mark.parametrize("install", ["grader==0.1.0", "git+https://example.org/course/grader@v1"], ids=["index", "url"])
@pytest.mark.parametrize("render", [github_actions_workflow, gitlab_ci_config], ids=["github", "gitlab"])
def test_every_python_the_job_runs_is_isolated_and_pip_runs_outside_the_checkout(install: str, render: Any) -> None:
    lines = _commands(render(CiRecipe(assignment="why-softmax", install=install)))
    python = [line for line in lines if line.startswith("python") or " python " in line]
    assert python and all("python -I -m " in line for line in python), python
    assert not any(line.startswith("grader ") or line.startswith("pip ") for line in lines)
    pip = next(index for index, line in enumerate(lines) if "-m pip install" in line)
    assert lines[pip - 1] == 'cd "$GRADER_HOME"' and 'GRADER_HOME="$(mktemp -d)"' in lines[:pip]


@pytest.mark.parametrize(
    ("install", "source"),
    [
        ("grader", "index"),
        ("grader==0.1.0", "index"),
        ("grader[dask]>=0.1,<0.2", "index"),
        ("git+https://github.com/course/grader@v0.1.0", "url"),
        ("grader @ https://example.org/grader-0.1.0-py3-none-any.whl", "url"),
        (".grader/grader-0.1.0-py3-none-any.whl", "repository"),
        ("grader-0.1.0-py3-none-any.whl", "repository"),
        ("vendor/grader", "repository"),
        ("./grader", "repository"),
        ("file:///opt/grader.whl", "repository"),
        ("grader @ file:///tmp/x.whl", "repository"),
    ],
    ids=["name", "pinned", "range", "git", "url-wheel", "wheel", "bare-wheel", "folder", "dot", "file-url", "at-file"],
)
def test_install_source_tells_what_the_learner_can_swap(install: str, source: str) -> None:
    assert install_source(install) == source


@pytest.mark.parametrize(
    "install", [".grader/missing.whl", "vendor/grader", "../outside.whl", "/opt/grader.whl"], ids=list("abcd")
)
def test_a_file_in_the_repository_the_export_cannot_pin_is_refused(install: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["export", "github-actions", "--out", str(tmp_path / "repo"), "--assignment", "all", "--install", install]
    )
    assert result.exit_code == 2 and "the learner can swap" in result.output
    assert not (tmp_path / "repo" / WORKFLOW).exists()


def test_a_wheel_the_instructor_put_in_the_repository_is_pinned_by_its_sha256(tmp_path: Path) -> None:
    wheel = tmp_path / "repo" / "vendor" / "grader-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"the instructor's wheel")
    args = ["--out", str(tmp_path / "repo"), "--assignment", "all", "--install", "vendor/grader-0.1.0-py3-none-any.whl"]
    assert CliRunner().invoke(main, ["export", "gitlab-ci", *args]).exit_code == 0
    variables = yaml.safe_load((tmp_path / "repo" / ".gitlab-ci.yml").read_text())["grade"]["variables"]
    assert variables["GRADER_WHEEL_SHA256"] == hashlib.sha256(b"the instructor's wheel").hexdigest()
