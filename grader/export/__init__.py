"""Files that put the grader where courses already are: CI for learners' repositories, a Gradescope bundle.

- ``github_actions``: ``.github/workflows/grade.yml`` for a learner's repository (GitHub Classroom).
- ``gitlab_ci``: ``.gitlab-ci.yml`` with the same steps; ``ci`` what both jobs run.
- ``gradescope_bundle`` and ``gradescope_scripts``: the autograder zip (``setup.sh``, ``run_autograder``,
  the grader wheel, the assignment's specs and solutions).
- ``images``: the build folders of a PrairieLearn grader image and an Exercism test-runner image, from
  the scripts and Dockerfiles in ``platforms/`` (package data, so an installed wheel has them).
- ``pins``: the exact versions of the grader's dependencies installed here, which images and bundles pin.
- ``wheel``: the installed grader as a wheel, which the others ship.

Each builds text or bytes from its parameters; only ``grader.cli`` decides
where they are written. It may import spec and the foundation; never cli,
batch or authoring.
"""
