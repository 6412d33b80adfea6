"""``grader export github-actions``: a workflow that grades a learner's repository (GitHub Classroom).

Steps: check out; set up Python; install the grader (``ci.install_commands``:
isolated, outside the checkout, a repository's wheel only by its sha256);
grade to JUnit with ``--min-score`` (status kept); write the Markdown report
and the note that this is feedback, not a grade, to ``$GITHUB_STEP_SUMMARY``;
upload the JUnit file as an artifact; fail the job when the score is below
the minimum. The publishing steps carry ``if: always()``, so a low score
still shows its feedback.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from grader.export.ci import FEEDBACK_NOTE, RESULTS_DIR, CiRecipe, install_commands, write_text, yaml_string

__all__ = ["WORKFLOW", "github_actions_workflow", "write_github_actions"]

WORKFLOW = Path(".github") / "workflows" / "grade.yml"


def github_actions_workflow(recipe: CiRecipe) -> str:
    """The workflow file's text."""
    env = "\n".join(f"      {name}: {yaml_string(value)}" for name, value in recipe.variables().items())
    junit = f"{RESULTS_DIR}/junit.xml"
    install = "\n".join(f"          {line}" for line in install_commands(recipe))
    return f"""\
# Grades this repository with the grader on every push; written by 'grader export github-actions'.
# Edit the values under 'env' to change the assignment, the files graded or the minimum score.
# This job is feedback for the learner, not the grade of record: the learner can change anything in
# this repository, this file included. Grade the collected repositories on your side with
# 'grader batch DIR --assignment ASSIGNMENT --out OUT' and the full specs (see docs/platforms.md).
name: grade

on:
  push:
  pull_request:
  workflow_dispatch:

permissions:
  contents: read

jobs:
  grade:
    runs-on: ubuntu-latest
    timeout-minutes: 20
    env:
{env}
    steps:
      - uses: actions/checkout@v4

      - uses: actions/setup-python@v5
        with:
          python-version: {yaml_string(recipe.python)}

      - name: Install the grader
        # Isolated, from a folder outside the checkout: nothing in the repository can stand in for pip or
        # the grader; a wheel from the repository is installed only if its sha256 is GRADER_WHEEL_SHA256.
        run: |
{install}

      - name: Grade
        id: grade
        # Exit 1 (below the minimum) is acted on by the last step, after the feedback is published;
        # 2 or 3 (a broken setup) fails here.
        run: |
          mkdir -p {RESULTS_DIR}
          status=0
          {recipe.grade("junit", output=junit, min_score=True)} || status=$?
          echo "status=$status" >> "$GITHUB_OUTPUT"
          if [ "$status" -gt 1 ]; then exit "$status"; fi

      - name: Write the feedback to the job summary
        if: always()
        run: |
          {recipe.grade("markdown")} >> "$GITHUB_STEP_SUMMARY" || [ "$?" -eq 1 ]
          printf '\\n> %s\\n' {shlex.quote(FEEDBACK_NOTE)} >> "$GITHUB_STEP_SUMMARY"

      - name: Upload the JUnit report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: grader-junit
          path: {junit}
          if-no-files-found: warn

      - name: Require the minimum score
        env:
          STATUS: ${{{{ steps.grade.outputs.status }}}}
        run: |
          if [ "$STATUS" != "0" ]; then
            echo "::error::The score is below the minimum ($GRADER_MIN_SCORE of the points); the job summary says why."
            exit 1
          fi
"""


def write_github_actions(out: Path, recipe: CiRecipe) -> Path:
    """Write ``out/.github/workflows/grade.yml``; return its path."""
    return write_text(out / WORKFLOW, github_actions_workflow(recipe))
