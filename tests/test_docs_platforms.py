"""docs/platforms.md: the blocks marked ``<!-- checked -->`` run as written and make what they promise."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "platforms.md"
CHECKED = re.compile(r"<!-- checked -->\n```(\w+)\n(.*?)```", flags=re.DOTALL)


def checked_blocks() -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in CHECKED.finditer(DOC.read_text(encoding="utf-8"))]


def test_doc_has_a_checked_recipe_for_every_platform() -> None:
    text = DOC.read_text(encoding="utf-8")
    for heading in ("GitHub Classroom", "GitLab", "Gradescope", "PrairieLearn", "Exercism"):
        assert re.search(rf"^## {heading}", text, flags=re.MULTILINE), heading
    commands = "\n".join(body for language, body in checked_blocks() if language == "sh")
    for command in (
        "grader export github-actions",
        "grader export gitlab-ci",
        "grader export gradescope",
        "grader export prairielearn",
        "pl-image/entrypoint.sh",
        "export exercism exercism-runner",
        "exercism-runner/bin/run.sh",
    ):
        assert command in commands, command


def test_doc_json_blocks_parse() -> None:
    blocks = [body for language, body in checked_blocks() if language == "json"]
    assert blocks
    for body in blocks:
        options = json.loads(body)["externalGradingOptions"]
        assert options["entrypoint"] == "/opt/grader-pl/entrypoint.sh"
        assert options["environment"]["GRADER_EXERCISE"] == "stable-softmax"
        assert options["serverFilesCourse"] == ["grader/"]  # the specs come from the course, not the image


def _section(text: str, heading: str) -> str:
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_doc_says_a_repository_check_is_feedback_and_where_the_grade_comes_from() -> None:
    text = DOC.read_text(encoding="utf-8")
    github = _section(text, "GitHub Classroom")
    assert "feedback, not a grade" in github.lower() and "grader batch" in github and "--require-hashes" in github
    assert "feedback, not a grade" in _section(text, "GitLab CI").lower()
    lms = (ROOT / "docs" / "lms-import.md").read_text(encoding="utf-8")
    assert "feedback for the learner, not a grade" in lms and "grader batch" in lms


def test_doc_builds_the_prairielearn_image_without_specs_for_amd64() -> None:
    prairielearn = _section(DOC.read_text(encoding="utf-8"), "PrairieLearn")
    build = next(line for line in prairielearn.splitlines() if line.startswith("docker build"))
    assert "--platform linux/amd64" in build and build.endswith(" pl-image")
    assert "grader export prairielearn pl-image" in prairielearn
    assert "serverFilesCourse/grader/" in prairielearn and "/opt/grader-course" not in prairielearn
    assert "publicly" in prairielearn or "public registry" in prairielearn


@pytest.mark.slow
def test_doc_commands_run_and_write_what_they_promise(tmp_path: Path) -> None:
    for name in ("exercises", "solutions"):  # the course repository the doc is run from
        (tmp_path / name).symlink_to(ROOT / name)
    env = {key: value for key, value in os.environ.items() if key != "GRADER_EXERCISES"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    for language, body in checked_blocks():
        if language != "sh":
            continue
        done = subprocess.run(["bash", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert "Traceback" not in done.stderr and "grader: error" not in done.stderr, (body, done.stderr)
    repo = tmp_path / "course-repo"
    workflow = yaml.safe_load((repo / ".github/workflows/grade.yml").read_text())
    assert workflow["jobs"]["grade"]["env"]["GRADER_ASSIGNMENT"] == "why-softmax"
    gitlab = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())
    assert gitlab["grade"]["artifacts"]["reports"]["junit"]
    assert (repo / "public-checks" / "why-softmax.yaml").is_file()
    assert (repo / workflow["jobs"]["grade"]["env"]["GRADER_INSTALL"]).is_file()
    with zipfile.ZipFile(tmp_path / "autograder.zip") as archive:
        assert {"setup.sh", "run_autograder"} <= set(archive.namelist())
    prairielearn = json.loads((tmp_path / "pl-job/results/results.json").read_text())
    assert prairielearn["gradable"] is True and 0 < prairielearn["score"] < 1
    assert (tmp_path / "pl-image/Dockerfile").is_file() and (tmp_path / "exercism-runner/Dockerfile").is_file()
    exercism = json.loads((tmp_path / "exercism-out/results.json").read_text())
    assert exercism["version"] == 3 and exercism["status"] == "fail"
    assert json.loads((tmp_path / "exercism.json").read_text())["status"] == "fail"
    assert json.loads((tmp_path / "prairielearn.json").read_text())["gradable"] is True
    assert ET.parse(tmp_path / "junit.xml").getroot().get("failures") != "0"
