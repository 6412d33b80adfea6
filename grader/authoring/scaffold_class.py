"""``grader new --kind class``: the skeleton of an exercise whose entry is a class, exercised by scripts.

The spec names one class entry (a constructor, a method, an attribute), one
case set of scripts and one check that judges a value a script keeps; the
reference is a class stub (every method raising ``NotImplementedError``,
which ``grader validate`` reports as a stub) and the known-wrong solution
keeps its state on the class, shared by every object, the mistake scripts
run one after another catch whatever the class computes.
"""

from __future__ import annotations

__all__ = ["class_known_wrong_stub", "class_name", "class_reference_stub", "class_spec"]


def class_name(exercise_id: str) -> str:
    """``running-total`` -> ``RunningTotal``: the class the learner writes."""
    return "".join(part[:1].upper() + part[1:] for part in exercise_id.split("-"))


def class_spec(exercise_id: str, name: str, solutions: str) -> str:
    """The spec of a new class exercise: one class entry, one case set of scripts, one check, one known-wrong."""
    return f"""\
# The exercise {exercise_id!r}, from 'grader new --kind class'. Fill in every TODO, then self-test it:
#   grader validate --exercise {exercise_id}
# docs/authoring.md ("Class entries: scripts of steps") explains each key.
id: {exercise_id}
kind: implementation
title: "TODO: one line naming the exercise"
prompt: |
  TODO: what the learner writes, as they will read it: the class, its
  constructor, its methods and what its attributes hold.

# A class entry: the constructor's signature (a kind for each argument), the methods
# scripts may call and the attributes or properties they may read. The handout's
# stub is a class skeleton with each of them.
entries:
  {name}:
    kind: class
    signature: {name}()
    methods: ["add(x)"]
    attributes: [total]
    returns: "TODO: what its attributes hold, in words"

# A class's cases are scripts: construct (new), call methods in order (call, args),
# read attributes (read), keep values for checks (keep), and say where a step must
# raise (expect_raises). Each script is one case; each constructs a new object.
cases:
  additions:
    - scripts:
        - - new: {{}}
          - call: add
            args: {{x: 1.0}}
          - read: total
            keep: total
        - - new: {{}}
          - call: add
            args: {{x: 2.0}}
          - call: add
            args: {{x: 3.0}}
          - read: total
            keep: total

# A check judges a kept value as a field (item:), and says what it judges in description:.
checks:
  - id: total-matches
    description: "TODO: total is the sum of the numbers added"
    property: matches-reference
    item: total
    cases: [additions]
    visibility: public

# A solution that passes every check. It never reaches learners.
reference_solution: {solutions}/reference.py

# Solutions with one typical mistake each, and the checks that must catch them.
known_wrong:
  - id: shared-state
    path: {solutions}/wrong_shared_state.py
    misconception: "each {name} keeps its own numbers; a list on the class is shared by every object."
    must_fail: [total-matches]
"""


def class_reference_stub(exercise_id: str, name: str) -> str:
    """``reference.py``: the class, each method raising ``NotImplementedError`` until the author writes it."""
    return f'''\
"""Reference solution of {exercise_id}: it must pass every check of the spec.

It never reaches learners. 'grader validate --exercise {exercise_id}' says it is a
stub until the class below does the work.
"""


class {name}:
    def __init__(self):
        raise NotImplementedError("write the reference implementation of {name}")

    def add(self, x):
        raise NotImplementedError("write the reference implementation of {name}.add")

    @property
    def total(self):
        raise NotImplementedError("write the reference implementation of {name}.total")
'''


def class_known_wrong_stub(exercise_id: str, name: str) -> str:
    """``wrong_shared_state.py``: the numbers kept on the class, so one object's reach the next."""
    return f'''\
"""Known-wrong solution of {exercise_id}: its numbers are kept on the class, shared by every object.

'total-matches' must catch it: the second script's object starts with the first's numbers.
"""


class {name}:
    values = []  # the mistake: one list for every object

    def add(self, x):
        self.values.append(x)

    @property
    def total(self):
        return float(sum(self.values))
'''
