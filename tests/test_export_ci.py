"""``grader export github-actions`` and ``gitlab-ci``: the files parse, grade, publish, and fail below the minimum."""

from __future__ import annotations

import base64
import json
import os
import re
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
from grader.export.ci import CiRecipe
from grader.export.github_actions import ACTIONS, CLASSROOM_BOT, github_actions_workflow
from grader.export.gitlab_ci import gitlab_ci_config

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = Path(".github/workflows/grade.yml")
STARTED_ALWAYS = "${{ !cancelled() && steps.started.outputs.started == 'true' }}"


def export(kind: str, out: Path, *args: str) -> Any:
    result = CliRunner().invoke(main, ["export", kind, "--out", str(out), *args])
    return result


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return workflow["jobs"]["grade"]["steps"]


def test_github_workflow_parses_grades_publishes_and_fails_below_the_minimum(tmp_path: Path) -> None:
    result = export(
        "github-actions", tmp_path, "--assignment", "why-softmax", "--min-score", "0.6", "--submission", "work"
    )
    assert result.exit_code == 0, result.output
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    job = workflow["jobs"]["grade"]
    assert job["env"]["GRADER_ASSIGNMENT"] == "why-softmax" and job["env"]["GRADER_SUBMISSION"] == "work"
    assert job["env"]["GRADER_MIN_SCORE"] == "0.6"
    steps = _steps(workflow)
    uses = [step.get("uses") for step in steps]
    assert "actions/checkout@v7" in uses and "actions/setup-python@v7" in uses
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "python -I -m pip install" in runs and "--require-hashes" in runs
    grade = next(step for step in steps if "--format junit" in step.get("run", ""))
    assert "python -I -m grader.cli --exercises" in grade["run"] and " grade " in grade["run"]
    assert "--min-score" in grade["run"]
    summary = next(step for step in steps if "--format markdown" in step.get("run", ""))
    assert "GITHUB_STEP_SUMMARY" in summary["run"] and summary["if"] == STARTED_ALWAYS
    upload = next(step for step in steps if step.get("uses") == "actions/upload-artifact@v7")
    assert upload["if"] == STARTED_ALWAYS and upload["with"]["path"].endswith("junit.xml")
    assert grade["run"].count("grader-results/junit.xml") == 1 and upload["with"]["path"] == "grader-results/junit.xml"
    last = steps[-1]
    assert "steps.grade.outputs.status" in str(last) and "exit 1" in last["run"] and "cancelled()" not in last["if"]


def _workflow(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = export("github-actions", tmp_path, "--assignment", "why-softmax", "--install", "grader", *args)
    assert result.exit_code == 0, result.output
    return yaml.safe_load((tmp_path / WORKFLOW).read_text())


def test_github_workflow_runs_once_per_push_and_a_newer_push_cancels_the_older(tmp_path: Path) -> None:
    workflow = _workflow(tmp_path)
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"push", "workflow_dispatch"}  # no pull_request: its commits are pushed and graded once
    assert workflow["concurrency"] == {
        "group": "${{ github.workflow }}-${{ github.ref }}",
        "cancel-in-progress": "${{ github.event_name == 'push' }}",
    }
    assert workflow["permissions"] == {"contents": "read"}


def test_github_job_is_skipped_on_the_commits_classroom_makes(tmp_path: Path) -> None:
    job = _workflow(tmp_path)["jobs"]["grade"]
    assert job["if"] == f"github.actor != '{CLASSROOM_BOT}'"


def test_github_workflow_caches_pip_under_the_hash_of_a_file_the_export_writes(tmp_path: Path) -> None:
    steps = _steps(_workflow(tmp_path))
    setup = next(step for step in steps if step.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["cache"] == "pip"
    assert (tmp_path / setup["with"]["cache-dependency-path"]).is_file()
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_github_workflow_annotates_the_files_whatever_the_score(tmp_path: Path) -> None:
    steps = _steps(_workflow(tmp_path))
    annotate = next(step for step in steps if "--format github" in step.get("run", ""))
    assert annotate["if"] == STARTED_ALWAYS and '[ "$?" -eq 1 ]' in annotate["run"]
    names = [step.get("name") for step in steps]
    assert names.index(annotate["name"]) < names.index("Require the minimum score")


@pytest.mark.parametrize("pinned", [False, True], ids=["major-tags", "pinned"])
def test_github_actions_are_the_node24_majors_by_tag_or_by_commit(pinned: bool, tmp_path: Path) -> None:
    _workflow(tmp_path, *(["--pin-actions"] if pinned else []))
    text = (tmp_path / WORKFLOW).read_text()
    written = re.findall(r"uses: (\S+)(.*)", text)
    assert [use.split("@")[0] for use, _ in written] == [
        "actions/checkout",
        "actions/setup-python",
        "actions/upload-artifact",
    ]
    for use, rest in written:
        action = next(a for a in ACTIONS.values() if a.repository == use.split("@")[0])
        if pinned:
            assert use == f"{action.repository}@{action.commit}" and re.fullmatch(r"[0-9a-f]{40}", action.commit)
            assert rest.strip() == f"# {action.tag}"
        else:
            assert use == f"{action.repository}@{action.tag.split('.')[0]}" and not rest.strip()


def test_classroom_option_hands_the_points_to_classrooms_reporter(tmp_path: Path) -> None:
    workflow = _workflow(tmp_path, "--classroom")
    assert "repository_dispatch" in workflow[True] and workflow["permissions"]["actions"] == "read"
    steps = _steps(workflow)
    points = next(step for step in steps if "--format github-classroom" in step.get("run", ""))
    assert points["if"] == STARTED_ALWAYS and "base64 -w 0" in points["run"] and "result=" in points["run"]
    reporter = next(step for step in steps if "autograding-grading-reporter" in step.get("uses", ""))
    # The reporter reads the step output from the variable named after each runner id, upper case, + _RESULTS.
    runner = reporter["with"]["runners"]
    assert runner == points["id"] and re.fullmatch(r"[a-zA-Z0-9]+", runner)
    assert reporter["env"] == {f"{runner.upper()}_RESULTS": f"${{{{ steps.{runner}.outputs.result }}}}"}
    assert reporter["continue-on-error"] is True  # the job's colour stays the minimum score's
    assert steps[-1]["name"] == "Require the minimum score"
    plain = yaml.safe_load(github_actions_workflow(CiRecipe(assignment="why-softmax", install="grader")))
    assert not any("reporter" in step.get("uses", "") for step in _steps(plain))


def _run_started_step(repo: Path, tmp_path: Path) -> tuple[str, str, str]:
    """Run the workflow's first step in ``repo``: its stdout, the summary it wrote and its ``started`` output."""
    job = yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]["grade"]
    step = next(step for step in job["steps"] if step.get("id") == "started")
    outputs, summary = tmp_path / "started-outputs", tmp_path / "started-summary.md"
    outputs.unlink(missing_ok=True)
    summary.unlink(missing_ok=True)
    env = {**os.environ, **job["env"], "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout, summary.read_text() if summary.exists() else "", _outputs(outputs)["started"]


def test_the_untouched_handout_is_not_started_and_any_edit_to_a_work_file_starts_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "release", "--out", str(repo)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert export("github-actions", repo, "--assignment", "why-softmax", "--install", "grader").exit_code == 0
    hashed = [line.split("  ", 1)[1] for line in (repo / ".grader/handout.sha256").read_text().splitlines()]
    assert "stable-softmax.py" in hashed and "answers.yaml" in hashed
    assert not any(name.startswith(("public-checks/", ".")) for name in hashed)
    stdout, summary, started = _run_started_step(repo, tmp_path)
    assert started == "false" and stdout.startswith("::notice title=grader::Not started: ")
    assert summary.startswith("Not started: ")
    (repo / "README.md").write_text("notes\n")  # not a file the learner's work is in
    assert _run_started_step(repo, tmp_path)[2] == "false"
    (repo / "work").mkdir()
    (repo / "work" / "draft.py").write_text("x = 1\n")  # a new file of work
    assert _run_started_step(repo, tmp_path)[2] == "true"
    (repo / "work" / "draft.py").unlink()
    assert _run_started_step(repo, tmp_path)[2] == "false"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # .git/ and the specs are not work
    (repo / "public-checks" / "extra.yaml").write_text("x: 1\n")
    assert _run_started_step(repo, tmp_path)[2] == "false"
    (repo / "logsumexp.py").rename(tmp_path / "logsumexp.py")  # a handout file removed
    assert _run_started_step(repo, tmp_path)[2] == "true"
    (tmp_path / "logsumexp.py").rename(repo / "logsumexp.py")
    with (repo / "stable-softmax.py").open("a") as file:
        file.write("# begun\n")
    stdout, summary, started = _run_started_step(repo, tmp_path)
    assert started == "true" and stdout == "" and summary == ""


def test_without_a_handout_every_push_is_graded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    assert export("github-actions", repo, "--assignment", "why-softmax", "--install", "grader").exit_code == 0
    assert not (repo / ".grader/handout.sha256").exists()
    assert _run_started_step(repo, tmp_path)[2] == "true"


def test_gitlab_ci_parses_grades_and_reports_junit_always(tmp_path: Path) -> None:
    result = export("gitlab-ci", tmp_path, "--assignment", "softmax-bridge", "--install", "grader==0.1.0")
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((tmp_path / ".gitlab-ci.yml").read_text())
    job = config["grade"]
    assert job["variables"]["GRADER_INSTALL"] == "grader==0.1.0"
    script = "\n".join(job["script"])
    assert " grade " in script and "--min-score" in script and "--format junit" in script
    assert "--format markdown" in script
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == "grader-results/junit.xml"
    assert "grader-results/feedback.md" in job["artifacts"]["paths"]
    assert not (tmp_path / ".grader").exists()  # --install given: no wheel written


def test_default_install_is_the_graders_own_wheel_in_the_repository(tmp_path: Path) -> None:
    assert export("github-actions", tmp_path, "--assignment", "all").exit_code == 0
    install = yaml.safe_load((tmp_path / WORKFLOW).read_text())["jobs"]["grade"]["env"]["GRADER_INSTALL"]
    wheel = tmp_path / install
    assert install.startswith(".grader/grader-") and install.endswith("-py3-none-any.whl") and wheel.is_file()
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "grader/cli/commands.py" in names and not any("__pycache__" in n for n in names)
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "grader = grader.cli:run" in archive.read(info).decode()


@pytest.mark.parametrize(
    "args",
    [
        ["--assignment", "Why Softmax"],
        ["--assignment", "all", "--install", "a\nb"],
        ["--assignment", "all", "--submission", "${{ secrets.TOKEN }}"],
        ["--assignment", "all", "--python", "latest"],
    ],
    ids=["bad-id", "newline", "expression", "python"],
)
def test_bad_values_are_refused_and_nothing_is_written(args: list[str], tmp_path: Path) -> None:
    result = export("github-actions", tmp_path / "repo", *args)
    assert result.exit_code == 2
    assert not (tmp_path / "repo").exists()


def test_an_assignment_the_specs_do_not_hold_is_refused(tmp_path: Path) -> None:
    result = export(
        "gitlab-ci", tmp_path / "repo", "--assignment", "why-sofmax", "--exercises", str(ROOT / "exercises")
    )
    assert result.exit_code == 2 and "did you mean 'why-softmax'" in result.output
    assert not (tmp_path / "repo").exists()


@pytest.mark.parametrize("public_only", [True, False], ids=["public", "all-checks"])
def test_recipe_grade_command_names_the_format_and_the_checks(public_only: bool) -> None:
    recipe = CiRecipe(assignment="why-softmax", install="grader", public_only=public_only)
    command = recipe.grade("junit", output="x.xml", min_score=True)
    assert command.startswith('python -I -m grader.cli --exercises "$GRADER_SPECS" grade "$GRADER_SUBMISSION"')
    assert ("--public" in command) is public_only and '--min-score "$GRADER_MIN_SCORE"' in command
    for text in (github_actions_workflow(recipe), gitlab_ci_config(recipe)):
        assert yaml.safe_load(text)


# --- the generated commands, run here as the CI job would run them ------------------------------


@pytest.fixture(scope="module")
def learner_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handout, as a learner's repository, with a softmax that overflows filled in."""
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


def _job_env(repo: Path, **extra: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)  # where this environment's `grader` is
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ["PATH"], **extra}


def _outputs(path: Path) -> dict[str, str]:
    """The step outputs written to ``$GITHUB_OUTPUT`` so far (``name=value`` lines)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize(("minimum", "status"), [("0.9", "1"), ("0", "0")], ids=["below", "reached"])
def test_github_steps_publish_then_fail_below_the_minimum(
    learner_repo: Path, tmp_path: Path, minimum: str, status: str
) -> None:
    args = ["--assignment", "why-softmax", "--min-score", minimum, "--install", "grader", "--classroom"]
    assert export("github-actions", tmp_path, *args).exit_code == 0
    job = yaml.safe_load((tmp_path / WORKFLOW).read_text())["jobs"]["grade"]
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    env = _job_env(learner_repo, GITHUB_OUTPUT=str(outputs), GITHUB_STEP_SUMMARY=str(summary), **job["env"])
    printed = {}
    for step in job["steps"]:
        if "run" not in step or "pip install" in step["run"]:
            continue
        env["STATUS"] = _outputs(outputs).get("status", "")
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=learner_repo, env=env, capture_output=True, text=True, timeout=300
        )
        last = step is job["steps"][-1]
        assert done.returncode == (int(status) if last else 0), (step.get("name"), done.stdout, done.stderr)
        printed[step.get("name")] = done.stdout
    assert _outputs(outputs)["status"] == status
    assert summary.read_text().startswith("# Grading results: ")
    assert "<testsuites" in (learner_repo / "grader-results" / "junit.xml").read_text()
    # The annotations: the overflowing softmax's failing checks, as the runner reads them; the total last.
    annotations = printed["Annotate the files with the checks that did not pass"].splitlines()
    softmax = [line for line in annotations if "title=stable-softmax%3A " in line]
    assert softmax and all(line.startswith("::error file=./stable-softmax.py,line=") for line in softmax), annotations
    assert annotations[-1].startswith("::notice title=grader::") and all(line.startswith("::") for line in annotations)
    # What Classroom's reporter gets: the points of the same grading, base64.
    result = json.loads(base64.b64decode(_outputs(outputs)["result"]))
    junit = (learner_repo / "grader-results" / "junit.xml").read_text()
    scores = re.findall(r'<property name="score" value="([^"]+)"', junit)
    assert sum(test["score"] for test in result["tests"]) == pytest.approx(sum(float(x) for x in scores))
    assert result["status"] == "fail"


@pytest.mark.slow
def test_gitlab_script_writes_reports_and_fails_below_the_minimum(learner_repo: Path, tmp_path: Path) -> None:
    assert export("gitlab-ci", tmp_path, "--assignment", "why-softmax", "--install", "grader").exit_code == 0
    job = yaml.safe_load((tmp_path / ".gitlab-ci.yml").read_text())["grade"]
    script = "\n".join(line for line in job["script"] if "pip install" not in line)
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=learner_repo,
        env=_job_env(learner_repo, **job["variables"]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "below the minimum" in done.stdout and "# Grading results: " in done.stdout
    for path in [job["artifacts"]["reports"]["junit"], *job["artifacts"]["paths"]]:
        assert (learner_repo / path).is_file()
