"""What learners may see of an exercise: prompts, signatures, public examples and public checks.

Used by ``grader show`` and the handout; it never touches a hidden check's
cases, a reference, a known-wrong solution or a quiz's answer key.
"""

from __future__ import annotations

from grader.engine.quiz import letters
from grader.spec.models import ChoiceQuestion, Exercise, ImplementationExercise

__all__ = ["describe_exercise"]


def describe_exercise(exercise: Exercise) -> str:
    """The learner-facing text of one exercise."""
    total = f"{exercise.max_score:g} point{'' if exercise.max_score == 1 else 's'}"
    lines = [f"{exercise.id}: {exercise.title}  ({exercise.kind}, {total})", ""]
    if exercise.prompt:
        lines += [exercise.prompt.rstrip(), ""]
    if isinstance(exercise, ImplementationExercise):
        lines.append("Write:")
        for entry in exercise.entries.values():
            lines.append(f"  def {entry.signature}  ->  {entry.returns}")
        if exercise.examples:
            lines += ["", "Examples:"]
            for example in exercise.examples:
                lines.append(f"  >>> {example.call}")
                lines.append(f"  {example.result}")
                if example.note:
                    lines.append(f"  ({example.note})")
        public = [c for c in exercise.checks if c.visibility == "public"]
        hidden = len(exercise.checks) - len(public)
        lines += ["", "Checks you can run now (grader grade FILE --public):"]
        for check in public:
            points = f"{check.points:g} point{'' if check.points == 1 else 's'}"
            lines.append(f"  {check.id}: {check.describe(exercise.entry_of(check))} ({points})")
        if hidden:
            lines.append(
                f"  ... and {hidden} hidden check{'s' if hidden != 1 else ''} that run when your work is graded."
            )
    else:
        lines.append(f"Answer in a YAML or JSON file under the key '{exercise.id}':")
        for question in exercise.questions:
            points = f"{question.points:g} point{'s' if question.points != 1 else ''}"
            lines += ["", f"{question.id} ({question.type}, {points}):", f"  {question.prompt.strip()}"]
            if isinstance(question, ChoiceQuestion):
                for letter, option in zip(letters(len(question.options)), question.options, strict=True):
                    lines.append(f"    {letter}. {option.text}")
    return "\n".join(lines).rstrip() + "\n"
