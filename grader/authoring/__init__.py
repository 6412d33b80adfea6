"""The instructor's side of an exercise: self-test, handout and skeleton.

It owns ``grader validate`` (``validate``, with the public examples'
self-tests in ``validate_examples`` and ``examples``), what learners may see
(``handout``), the released handout with the reference's public answers
(``release``), the last guard against leaked secrets (``leaks``) and
``grader new`` (``scaffold``). It may import grading, the engine, spec,
checks, submission, the sandbox and the foundation; never cli, batch or
export.
"""
