"""The exported GitHub workflow is one GitHub accepts: known keys, inputs the actions declare, outputs that exist.

The repository vendors no workflow schema, so the rules GitHub's workflow
syntax sets on the keys the export writes are stated here, and each action's
inputs are those its ``action.yml`` declares at the tag ``ACTIONS`` names.
actionlint, where it is installed (``pip install -e ".[workflow-lint]"``),
checks the whole file, shell scripts and expressions included.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.export.ci import CiRecipe
from grader.export.github_actions import ACTIONS, github_actions_workflow

# Keys of GitHub's workflow syntax, at each level the export writes.
WORKFLOW_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
JOB_KEYS = {"name", "if", "runs-on", "timeout-minutes", "env", "steps", "permissions", "concurrency", "outputs"}
STEP_KEYS = {"id", "if", "name", "uses", "run", "with", "env", "continue-on-error", "timeout-minutes", "shell"}
TRIGGERS = {"push", "pull_request", "workflow_dispatch", "repository_dispatch", "schedule"}
PERMISSION_LEVELS = {"read", "write", "none"}
# Each action's inputs and outputs as its action.yml declares them at the tag ACTIONS names.
DECLARED = {
    "actions/checkout": {"inputs": {"persist-credentials", "fetch-depth", "ref", "path"}, "outputs": {"commit", "ref"}},
    "actions/setup-python": {
        "inputs": {"python-version", "cache", "cache-dependency-path", "check-latest", "architecture"},
        "outputs": {"cache-hit", "python-path", "python-version"},
    },
    "actions/upload-artifact": {
        "inputs": {"name", "path", "if-no-files-found", "retention-days", "overwrite"},
        "outputs": {"artifact-id", "artifact-url", "artifact-digest"},
    },
    "classroom-resources/autograding-grading-reporter": {"inputs": {"runners", "token"}, "outputs": set()},
}
VARIANTS = {
    "plain": ({}, {}),
    "pinned": ({}, {"pin_actions": True}),
    "classroom": ({}, {"classroom": True}),
    "all-checks-pinned-classroom": ({"public_only": False}, {"pin_actions": True, "classroom": True}),
    "wheel": ({"install": ".grader/grader-0-py3-none-any.whl", "wheel_sha256": "a" * 64}, {}),
}


def _text(name: str) -> str:
    recipe_values, options = VARIANTS[name]
    recipe = CiRecipe(**{"assignment": "why-softmax", "install": "grader==0.1.0", **recipe_values})
    return github_actions_workflow(recipe, **options)


def _load(name: str) -> dict[str, Any]:
    workflow = yaml.safe_load(_text(name))
    workflow["on"] = workflow.pop(True)  # YAML 1.1 reads the key `on` as true; GitHub reads it as `on`
    return workflow


def _action(step: dict[str, Any]) -> str:
    return step["uses"].split("@")[0]


@pytest.mark.parametrize("name", list(VARIANTS), ids=list(VARIANTS))
def test_workflow_holds_only_keys_github_reads(name: str) -> None:
    workflow = _load(name)
    assert set(workflow) <= WORKFLOW_KEYS and set(workflow["on"]) <= TRIGGERS
    assert set(workflow["permissions"].values()) <= PERMISSION_LEVELS
    assert set(workflow["concurrency"]) == {"group", "cancel-in-progress"}
    for job in workflow["jobs"].values():
        assert set(job) <= JOB_KEYS and isinstance(job["timeout-minutes"], int)
        assert all(isinstance(value, str) for value in job["env"].values())
        for step in job["steps"]:
            assert set(step) <= STEP_KEYS, step
            assert ("uses" in step) != ("run" in step), step  # exactly one of them
            assert all(isinstance(value, (str, bool, int)) for value in step.get("with", {}).values())


@pytest.mark.parametrize("name", list(VARIANTS), ids=list(VARIANTS))
def test_every_action_is_given_only_inputs_it_declares_at_a_known_release(name: str) -> None:
    versions = {action.repository: action for action in ACTIONS.values()}
    for step in _load(name)["jobs"]["grade"]["steps"]:
        if "uses" not in step:
            continue
        action = versions[_action(step)]
        assert step["uses"].split("@")[1] in (action.commit, action.tag.split(".")[0])
        assert set(step.get("with", {})) <= DECLARED[action.repository]["inputs"], step


@pytest.mark.parametrize("name", list(VARIANTS), ids=list(VARIANTS))
def test_every_step_output_read_is_written_by_an_earlier_step(name: str) -> None:
    steps = _load(name)["jobs"]["grade"]["steps"]
    seen: dict[str, dict[str, Any]] = {}
    for step in steps:
        for step_id, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", yaml.safe_dump(step)):
            assert step_id in seen, (step_id, step.get("name"))
            earlier = seen[step_id]
            if "run" in earlier:
                assert f'echo "{output}=' in earlier["run"] and "$GITHUB_OUTPUT" in earlier["run"]
            else:
                assert output in DECLARED[_action(earlier)]["outputs"]
        if "id" in step:
            seen[step["id"]] = step


def test_every_expression_is_closed_and_reads_only_contexts_a_workflow_has() -> None:
    for name in VARIANTS:
        text = _text(name)
        assert text.count("${{") == text.count("}}")
        for expression in re.findall(r"\$\{\{(.*?)\}\}", text):
            words = set(re.findall(r"(?<![\w.-])([a-z]+)\.", expression))  # the context each path starts from
            assert words <= {"github", "steps", "env"}, expression


@pytest.mark.skipif(
    shutil.which("actionlint") is None, reason='actionlint is not installed: pip install -e ".[workflow-lint]"'
)
@pytest.mark.parametrize("name", list(VARIANTS), ids=list(VARIANTS))
def test_actionlint_finds_nothing_in_the_workflow(name: str, tmp_path: Path) -> None:
    path = tmp_path / ".github" / "workflows" / "grade.yml"
    path.parent.mkdir(parents=True)
    path.write_text(_text(name), encoding="utf-8")
    done = subprocess.run(
        ["actionlint", "-no-color", str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
