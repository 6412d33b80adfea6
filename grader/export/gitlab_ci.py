"""``grader export gitlab-ci``: a ``.gitlab-ci.yml`` that grades a learner's repository.

One job, the same steps as the GitHub workflow: install the grader
(``ci.install_commands``: isolated, outside the checkout, a repository's
wheel only by its sha256); grade to JUnit with ``--min-score`` (status
kept); write the Markdown feedback (kept as an artifact, linked from merge
requests, and printed to the job log, with the note that it is feedback,
not a grade); then fail the job when the score is below the minimum. The JUnit
file is ``artifacts: reports: junit``, uploaded ``when: always``, so GitLab
draws the results of a failing job too.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from grader.export.ci import FEEDBACK_NOTE, RESULTS_DIR, CiRecipe, install_commands, write_text, yaml_string

__all__ = ["GITLAB_CI", "gitlab_ci_config", "write_gitlab_ci"]

GITLAB_CI = Path(".gitlab-ci.yml")


def gitlab_ci_config(recipe: CiRecipe) -> str:
    """The ``.gitlab-ci.yml`` text."""
    env = "\n".join(f"    {name}: {yaml_string(value)}" for name, value in recipe.variables().items())
    junit, feedback = f"{RESULTS_DIR}/junit.xml", f"{RESULTS_DIR}/feedback.md"
    # In a subshell, so the script's later lines still run from the checkout's root.
    install = "\n".join(f"      {line}" for line in ["(", "set -e", *install_commands(recipe), ")"])
    return f"""\
# Grades this repository with the grader on every push; written by 'grader export gitlab-ci'.
# Edit the values under 'variables' to change the assignment, the files graded or the minimum score.
# This job is feedback for the learner, not the grade of record: the learner can change anything in
# this repository, this file included. Grade the collected repositories on your side with
# 'grader batch DIR --assignment ASSIGNMENT --out OUT' and the full specs (see docs/platforms.md).
grade:
  stage: test
  image: {yaml_string("python:" + recipe.python)}
  variables:
{env}
  script:
    # Isolated, from a folder outside the checkout: nothing in the repository can stand in for pip or the
    # grader; a wheel from the repository is installed only if its sha256 is GRADER_WHEEL_SHA256.
    - |
{install}
    - mkdir -p {RESULTS_DIR}
    # Exit 1 (below the minimum) is acted on last, after the feedback is written; 2 or 3 (a broken setup) stops here.
    - |
      status=0
      {recipe.grade("junit", output=junit, min_score=True)} || status=$?
      if [ "$status" -gt 1 ]; then exit "$status"; fi
      {recipe.grade("markdown", output=feedback)} || [ "$?" -eq 1 ]
      printf '\\n> %s\\n' {shlex.quote(FEEDBACK_NOTE)} >> {feedback}
      cat {feedback}
      if [ "$status" != "0" ]; then
        echo "The score is below the minimum ($GRADER_MIN_SCORE of the points); {feedback} says why."
        exit 1
      fi
  artifacts:
    when: always
    expose_as: grading feedback
    paths:
      - {feedback}
      - {junit}
    reports:
      junit: {junit}
"""


def write_gitlab_ci(out: Path, recipe: CiRecipe) -> Path:
    """Write ``out/.gitlab-ci.yml``; return its path."""
    return write_text(out / GITLAB_CI, gitlab_ci_config(recipe))
