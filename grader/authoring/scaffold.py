"""``grader new``: the commented skeleton of a new exercise, ready to fill in and validate.

An implementation exercise gets its spec, a reference stub (each entry
raising ``NotImplementedError``, which ``grader validate`` reports as a stub
until it is written) and one known-wrong solution that every exercise can
catch (it writes into its input); ``--kind class`` makes its entry a class
(``scaffold_class``). A quiz gets a spec with one question of each
kind. Every skeleton loads as it is written, so an author can run
``grader validate --exercise ID`` at any point.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from grader.authoring.scaffold_class import class_known_wrong_stub, class_name, class_reference_stub, class_spec
from grader.errors import UsageError

__all__ = ["KINDS", "new_exercise"]

KINDS = ("implementation", "class", "quiz")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def new_exercise(exercises_dir: Path, exercise_id: str, kind: str, *, taken: set[str]) -> list[Path]:
    """Write the skeleton of exercise ``exercise_id``; return the files written.

    ``taken``: the ids the catalog already uses. An existing id, spec file or
    solutions folder is refused (a ``UsageError``): nothing is overwritten.
    """
    if kind not in KINDS:
        raise UsageError(f"--kind must be one of: {', '.join(KINDS)}")
    if not _ID.match(exercise_id):
        raise UsageError(
            f"{exercise_id!r} is not an exercise id: use lower-case words joined by hyphens, like 'stable-sigmoid'"
        )
    if kind in ("implementation", "class") and not (
        exercise_id[0].isalpha()
        and exercise_id.replace("-", "_").isidentifier()
        and not keyword.iskeyword(exercise_id.replace("-", "_"))
    ):
        raise UsageError(
            f"{exercise_id!r} cannot name the function {exercise_id.replace('-', '_')}(): "
            "start the id with a letter and avoid Python keywords"
        )
    if exercise_id in taken:
        raise UsageError(f"the id {exercise_id!r} is already used by a spec in {exercises_dir}; choose another")
    root = exercises_dir.parent  # spec paths are relative to it; shown as given
    spec = exercises_dir / f"{exercise_id}.yaml"
    solutions = root / "solutions" / exercise_id
    for path in (spec, exercises_dir / f"{exercise_id}.yml", solutions):
        if path.exists():
            raise UsageError(f"{path} already exists; choose another id or remove it")
    if kind == "quiz":
        files = {spec: quiz_spec(exercise_id)}
    elif kind == "class":  # an implementation exercise whose entry is a class (scaffold_class)
        name = class_name(exercise_id)
        files = {
            spec: class_spec(exercise_id, name, f"solutions/{exercise_id}"),
            solutions / "reference.py": class_reference_stub(exercise_id, name),
            solutions / "wrong_shared_state.py": class_known_wrong_stub(exercise_id, name),
        }
    else:
        function = exercise_id.replace("-", "_")
        files = {
            spec: implementation_spec(exercise_id, function, f"solutions/{exercise_id}"),
            solutions / "reference.py": reference_stub(exercise_id, function),
            solutions / "wrong_mutates_input.py": known_wrong_stub(exercise_id, function),
        }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never overwrite, even a file made just now
            handle.write(text)
    return list(files)


def implementation_spec(exercise_id: str, function: str, solutions: str) -> str:
    """The spec of a new implementation exercise: one entry, two case sets, two checks, one known-wrong."""
    folder = solutions
    return f"""\
# The exercise {exercise_id!r}, from 'grader new'. Fill in every TODO, then self-test it:
#   grader validate --exercise {exercise_id}
# docs/authoring.md explains each key and every property; 'grader schema' lists them all.
id: {exercise_id}
kind: implementation
title: "TODO: one line naming the exercise"
prompt: |
  TODO: what the learner writes, as they will read it: the function, its
  arguments, what it returns, and the inputs it must handle.

# One entry per function the learner writes: the signature they see, and a kind
# for each argument in order (float_array, int_array, bool_array, number_array, float, int, bool,
# callable, any). An argument with a default may be left out of a case.
entries:
  {function}:
    signature: {function}(x)
    args: {{x: float_array}}
    returns: a NumPy array of floats, the shape of x

# Shown to learners ('grader show', the handout). 'grader validate' checks each
# result against the reference solution, to the digits written.
# examples:
#   - call: {function}(np.array([0.0, 1.0]))
#     result: array([0., 1.])

# Named sets of inputs. 'examples' are written out, simplest first; 'random'
# draws 'count' seeded inputs (the same on every run), simplest first.
cases:
  basic:
    - examples:
        - {{x: [0.0, 1.0, 2.0]}}
        - {{x: [[1.0, -1.0], [0.5, 2.0]]}}
    - random:
        count: 10
        args:
          x: {{shape: [[3], [2, 4]], scale: [1.0, 10.0]}}

# Each check is a property from the check library (docs/authoring.md), run on case
# sets. 'public' checks are in the handout for learners to run; hidden ones
# (the default) only when work is graded.
checks:
  - id: finite
    property: finite
    cases: [basic]
    visibility: public
  - id: leaves-input-unchanged
    property: leaves-input-unchanged
    cases: [basic]
  # TODO: the properties that say the values are right, for instance
  # - id: values-in-range
  #   property: ...

# A solution that passes every check. It never reaches learners.
reference_solution: {folder}/reference.py

# Solutions with one typical mistake each, and the checks that must catch them;
# 'grader validate' proves each is caught, and a learner whose output matches one
# is told its misconception.
known_wrong:
  - id: mutates-input
    path: {folder}/wrong_mutates_input.py
    misconception: "{function} writes its result into the caller's array instead of a new one."
    must_fail: [leaves-input-unchanged]
"""


def reference_stub(exercise_id: str, function: str) -> str:
    """``reference.py``: the entry, raising ``NotImplementedError`` until the author writes it."""
    return f'''\
"""Reference solution of {exercise_id}: it must pass every check of the spec.

It never reaches learners. 'grader validate --exercise {exercise_id}' says it is a
stub until the function below does the work.
"""

import numpy as np


def {function}(x):
    """TODO: the correct implementation."""
    raise NotImplementedError("write the reference implementation of {function}")
'''


def known_wrong_stub(exercise_id: str, function: str) -> str:
    """``wrong_mutates_input.py``: a mistake every exercise can catch; more ``wrong_*.py`` follow its shape."""
    return f'''\
"""Known-wrong solution of {exercise_id}: it writes into the caller's array.

'leaves-input-unchanged' must catch it (the spec's must_fail says so). Add one
wrong_*.py like this per misconception the exercise teaches, each with its
entry in the spec's known_wrong list.
"""

import numpy as np


def {function}(x):
    x[...] = 0.0  # the mistake: the caller's array is overwritten
    return x
'''


def quiz_spec(exercise_id: str) -> str:
    """The spec of a new quiz: one single-choice, one multiple-choice and one numeric question."""
    return f"""\
# The quiz {exercise_id!r}, from 'grader new'. Replace every TODO, then self-test it:
#   grader validate --exercise {exercise_id}
# Every option has a reason: why it is right, or the misconception behind it.
# Learners answer in a YAML or JSON file under the key '{exercise_id}'.
id: {exercise_id}
kind: quiz
title: "TODO: one line naming the quiz"
prompt: "TODO: what the quiz is about (optional)."
questions:
  - id: single-choice
    type: single
    prompt: "TODO: a question with exactly one right option."
    options:
      - text: "TODO: the right option"
        correct: true
        reason: "TODO: why it is right."
      - text: "TODO: a tempting wrong option"
        reason: "TODO: the misconception behind it."
  - id: multiple-choice
    type: multiple
    prompt: "TODO: a question with one or more right options (pick all)."
    options:
      - text: "TODO: a right option"
        correct: true
        reason: "TODO: why it is right."
      - text: "TODO: another right option"
        correct: true
        reason: "TODO: why it is right."
      - text: "TODO: a wrong option"
        reason: "TODO: the misconception behind it."
  - id: numeric
    type: numeric
    prompt: "TODO: a question whose answer is a number."
    answer: 0.5
    tolerance: 0.001
    reason_correct: "TODO: how the number follows."
    reason_wrong: "TODO: how to get the right number."
    mistakes:
      - value: 1.0
        reason: "TODO: the slip that gives this number."
"""
