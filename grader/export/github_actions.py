"""``grader export github-actions``: a workflow that grades a learner's repository (GitHub Classroom).

Steps: check out (no credentials kept); stop, green, with a "not started"
notice while the learner's files are still the handout's (``ci.handout_hashes``,
in ``.grader/handout.sha256``); set up Python, caching pip's downloads under
a key that is this file's hash (it names the grader installed); install
the grader (``ci.install_commands``: isolated, outside the checkout, a
repository's wheel only by its sha256); grade to JUnit with
``--min-score`` (status kept); annotate the learner's file with each check
that did not pass (``--format github``); write the Markdown report and the
note that this is feedback, not a grade, to ``$GITHUB_STEP_SUMMARY``; upload
the JUnit file as an artifact; with ``classroom``, hand the points to GitHub
Classroom's grading reporter; fail the job when the score is below the
minimum. The publishing steps run unless the run was cancelled (``if:
!cancelled()``), so a low score still shows its feedback.

The run: one per push (any branch) or manual start, never a second one for
the same commit from ``pull_request``; a newer push to the same ref cancels
the run still going. The job is skipped on the commits GitHub Classroom's bot
makes (the template's files, when it creates the repository), so a new
repository does not start red. The actions are the current majors, all on
Node 24 (``ACTIONS``); ``pin_actions`` names each by the commit of its tag,
with the tag in a comment, as GitHub's hardening guide advises.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from grader.export.ci import (
    FEEDBACK_NOTE,
    HANDOUT_HASHES,
    NOT_STARTED,
    RESULTS_DIR,
    CiRecipe,
    handout_check,
    handout_hashes,
    install_commands,
    write_text,
    yaml_string,
)

__all__ = ["ACTIONS", "Action", "WORKFLOW", "github_actions_workflow", "write_github_actions"]

WORKFLOW = Path(".github") / "workflows" / "grade.yml"
# The account GitHub Classroom makes a learner's repository with: its commits are the handout, not work.
CLASSROOM_BOT = "github-classroom[bot]"
# Every step after the first runs only on work begun; the publishing ones whatever the score.
_STARTED = "steps.started.outputs.started == 'true'"
# Not always(): a run cancelled by a newer push stops publishing too. In ${{ }}, since YAML reads a leading ! as a tag.
_ALWAYS_STARTED = f"${{{{ !cancelled() && {_STARTED} }}}}"
# The step id the Classroom reporter reads: it takes the output from the variable ID_RESULTS (upper case).
_POINTS_STEP = "points"


@dataclass(frozen=True)
class Action:
    """An action the workflow uses: its repository, the release tag it is written at, and that tag's commit."""

    repository: str
    tag: str
    commit: str

    def uses(self, *, pinned: bool) -> str:
        """The ``uses:`` value: the major tag (``@v7``), or the release's commit with the tag in a comment."""
        if pinned:
            return f"{self.repository}@{self.commit}  # {self.tag}"
        return f"{self.repository}@{self.tag.split('.')[0]}"


# Each tag's commit as its repository's tags give it; the three actions/ ones declare ``runs.using: node24``.
# The Classroom reporter's only release, v1, declares node20: see docs/platforms.md.
ACTIONS = {
    "checkout": Action("actions/checkout", "v7.0.1", "3d3c42e5aac5ba805825da76410c181273ba90b1"),
    "setup-python": Action("actions/setup-python", "v7.0.0", "5fda3b95a4ea91299a34e894583c3862153e4b97"),
    "upload-artifact": Action("actions/upload-artifact", "v7.0.0", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"),
    "classroom-reporter": Action(
        "classroom-resources/autograding-grading-reporter", "v1", "d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca"
    ),
}


def github_actions_workflow(recipe: CiRecipe, *, pin_actions: bool = False, classroom: bool = False) -> str:
    """The workflow file's text.

    ``pin_actions``: name each action by its release's commit, not by its major tag, which its owner can move.
    ``classroom``: also hand the points to GitHub Classroom's grading reporter, for its grade column.
    """
    env = "\n".join(f"      {name}: {yaml_string(value)}" for name, value in recipe.variables().items())
    junit = f"{RESULTS_DIR}/junit.xml"
    install = "\n".join(f"          {line}" for line in install_commands(recipe))
    check = "\n".join(f"          {line}" for line in handout_check())

    def uses(name: str) -> str:
        return ACTIONS[name].uses(pinned=pin_actions)

    triggers = "  push:\n  workflow_dispatch:\n" + ("  repository_dispatch:\n" if classroom else "")
    permissions = "  contents: read\n" + ("  actions: read\n" if classroom else "")
    return f"""\
# Grades this repository with the grader on every push; written by 'grader export github-actions'.
# Edit the values under 'env' to change the assignment, the files graded or the minimum score.
# This job is feedback for the learner, not the grade of record: the learner can change anything in
# this repository, this file included. Grade the collected repositories on your side with
# 'grader batch DIR --assignment ASSIGNMENT --out OUT' and the full specs (see docs/platforms.md).
name: grade

# One run per commit: push alone (a pull request's commits are pushed, so they are graded once).
on:
{triggers}
permissions:
{permissions}
# A newer push to the same branch cancels the run still grading the older one.
concurrency:
  group: ${{{{ github.workflow }}}}-${{{{ github.ref }}}}
  cancel-in-progress: ${{{{ github.event_name == 'push' }}}}

jobs:
  grade:
    # GitHub Classroom's bot makes the repository's first commit, the handout as it is: skipped, not red.
    if: github.actor != '{CLASSROOM_BOT}'
    runs-on: ubuntu-latest
    timeout-minutes: 20
    env:
{env}
    steps:
      - uses: {uses("checkout")}
        with:
          persist-credentials: false

      - name: Tell whether the work has started
        id: started
        # While the files the learner writes in are the handout's, none edited, added or removed, there is
        # nothing to grade: say so, green.
        run: |
{check}
          if [ -s {HANDOUT_HASHES} ] && [ "$current" = "$(cat {HANDOUT_HASHES})" ]; then
            echo "::notice title=grader::"{shlex.quote(NOT_STARTED)}
            printf '%s\\n' {shlex.quote(NOT_STARTED)} >> "$GITHUB_STEP_SUMMARY"
            echo "started=false" >> "$GITHUB_OUTPUT"
          else
            echo "started=true" >> "$GITHUB_OUTPUT"
          fi

      - uses: {uses("setup-python")}
        if: {_STARTED}
        with:
          python-version: {yaml_string(recipe.python)}
          # pip's downloads, kept under this file's hash: it names the grader installed.
          cache: pip
          cache-dependency-path: {WORKFLOW.as_posix()}

      - name: Install the grader
        if: {_STARTED}
        # Isolated, from a folder outside the checkout: nothing in the repository can stand in for pip or
        # the grader; a wheel from the repository is installed only if its sha256 is GRADER_WHEEL_SHA256.
        run: |
{install}

      - name: Grade
        id: grade
        if: {_STARTED}
        # Exit 1 (below the minimum) is acted on by the last step, after the feedback is published;
        # 2 or 3 (a broken setup) fails here.
        run: |
          mkdir -p {RESULTS_DIR}
          status=0
          {recipe.grade("junit", output=junit, min_score=True)} || status=$?
          echo "status=$status" >> "$GITHUB_OUTPUT"
          if [ "$status" -gt 1 ]; then exit "$status"; fi

      - name: Annotate the files with the checks that did not pass
        if: {_ALWAYS_STARTED}
        run: |
          {recipe.grade("github")} || [ "$?" -eq 1 ]

      - name: Write the feedback to the job summary
        if: {_ALWAYS_STARTED}
        run: |
          {recipe.grade("markdown")} >> "$GITHUB_STEP_SUMMARY" || [ "$?" -eq 1 ]
          printf '\\n> %s\\n' {shlex.quote(FEEDBACK_NOTE)} >> "$GITHUB_STEP_SUMMARY"

      - name: Upload the JUnit report
        if: {_ALWAYS_STARTED}
        uses: {uses("upload-artifact")}
        with:
          name: grader-junit
          path: {junit}
          if-no-files-found: warn
{_classroom_steps(recipe, uses("classroom-reporter")) if classroom else ""}
      - name: Require the minimum score
        if: {_STARTED}
        env:
          STATUS: ${{{{ steps.grade.outputs.status }}}}
        run: |
          if [ "$STATUS" != "0" ]; then
            echo "::error::The score is below the minimum ($GRADER_MIN_SCORE of the points); the job summary says why."
            exit 1
          fi
"""


def _classroom_steps(recipe: CiRecipe, reporter: str) -> str:
    """The steps that give GitHub Classroom the points: the result as a step output, then its reporter.

    The reporter fails its step when a test did not pass; ``continue-on-error`` leaves the job's colour to
    the last step, which goes by ``--min-score`` as without Classroom.
    """
    return f"""
      - name: Points for GitHub Classroom
        id: {_POINTS_STEP}
        if: {_ALWAYS_STARTED}
        run: |
          result="$({recipe.grade("github-classroom")} || [ "$?" -eq 1 ])"
          echo "result=$(printf '%s' "$result" | base64 -w 0)" >> "$GITHUB_OUTPUT"

      - name: Report the points to GitHub Classroom
        if: {_ALWAYS_STARTED}
        continue-on-error: true
        uses: {reporter}
        env:
          {_POINTS_STEP.upper()}_RESULTS: ${{{{ steps.{_POINTS_STEP}.outputs.result }}}}
        with:
          runners: {_POINTS_STEP}
"""


def write_github_actions(out: Path, recipe: CiRecipe, *, pin_actions: bool = False, classroom: bool = False) -> Path:
    """Write ``out/.github/workflows/grade.yml``, and the hashes of the handout's files it tells "not started" by.

    Returns the workflow's path. Without a file to hash (exported before ``grader release``), no hashes are
    written and every push is graded.
    """
    hashes = handout_hashes(out, recipe)
    if hashes:
        write_text(out / HANDOUT_HASHES, hashes)
    return write_text(out / WORKFLOW, github_actions_workflow(recipe, pin_actions=pin_actions, classroom=classroom))
