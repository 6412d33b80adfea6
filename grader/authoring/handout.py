"""What learners may see of an exercise: prompts, signatures, given code, public examples and public checks.

Used by ``grader show`` and the handout (``grader.authoring.release``); it
never touches a hidden check's cases, a reference, a known-wrong solution or
a quiz's answer key. The given code is the exercise's ``scaffold:`` (written
into the stub, and shown with the prompt) and its ``given_functions:``
(shown with their parameters, as cases hand them over).
"""

from __future__ import annotations

import ast

from grader.engine.case_variants import exercise_for_variant, shown_params
from grader.engine.quiz import letters
from grader.engine.quiz_variants import quiz_for_variant, variant_for
from grader.engine.variants import VariantError, read_secret
from grader.errors import SpecError, UsageError
from grader.spec.loader import Catalog
from grader.spec.models import ChoiceQuestion, EntrySpec, Exercise, ImplementationExercise, QuizExercise

__all__ = [
    "CHECK_COMMAND",
    "KINDS",
    "class_stub",
    "describe_exercise",
    "describe_variant",
    "given_code_lines",
    "handout_code",
    "params_note",
    "scaffold_entries",
    "stub",
]

CHECK_COMMAND = "grader grade {file} --public"
KINDS = {
    "float_array": "a NumPy array of floats",
    "int_array": "a NumPy array of integers",
    "bool_array": "a NumPy array of booleans",
    "number_array": "a NumPy array of floats or integers",
    "float": "a float",
    "int": "an int",
    "bool": "a bool",
    "callable": "a function",
    "any": "any value",
}
_NUMPY_IMPORT = "import numpy as np"


def describe_exercise(exercise: Exercise) -> str:
    """The learner-facing text of one exercise."""
    total = f"{exercise.max_score:g} point{'' if exercise.max_score == 1 else 's'}"
    lines = [f"{exercise.id}: {exercise.title}  ({exercise.kind}, {total})", ""]
    if exercise.prompt:
        lines += [exercise.prompt.rstrip(), ""]
    if isinstance(exercise, ImplementationExercise):
        if exercise.params:
            lines += [params_note(exercise), ""]
        lines.append("Write:")
        for entry in exercise.entries.values():
            if entry.kind == "class":  # what scripts call and read is the class's whole surface
                surface = ", ".join([*entry.methods, *entry.attributes])
                lines.append(f"  class {entry.signature}  with  {surface}  ->  {entry.returns}")
            else:
                lines.append(f"  def {entry.signature}  ->  {entry.returns}")
        given = given_code_lines(exercise)
        if given:
            lines += ["", *given]
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
        if exercise.params:
            lines += [params_note(exercise), ""]
        lines.append(f"Answer in a YAML or JSON file under the key '{exercise.id}':")
        for question in exercise.questions:
            points = f"{question.points:g} point{'s' if question.points != 1 else ''}"
            lines += ["", f"{question.id} ({question.type}, {points}):", f"  {question.prompt.strip()}"]
            if isinstance(question, ChoiceQuestion):
                for letter, option in zip(letters(len(question.options)), question.options, strict=True):
                    lines.append(f"    {letter}. {option.text}")
    return "\n".join(lines).rstrip() + "\n"


def params_note(exercise: Exercise) -> str:
    """The line a template carries: its values are drawn for each learner."""
    if isinstance(exercise, QuizExercise):
        names = ", ".join(f"{{{name}}}" for name in exercise.params)
        return f"Each learner answers this quiz for values of their own in place of {names}."
    return "Each learner gets this exercise with values of their own, drawn for them."


def describe_variant(exercise: Exercise, learner: str) -> str:
    """What ``learner`` sees of ``exercise``: for a quiz with params, their variant (the values filled in).

    The values come from the course's secret (``engine.variants.read_secret``); an exercise without params
    is the same for everyone, and is shown as ``describe_exercise`` shows it.
    """
    variant = variant_for(exercise, learner, read_secret)
    if variant is None:
        return describe_exercise(exercise)
    try:
        filled: Exercise = (
            quiz_for_variant(exercise, variant)
            if isinstance(exercise, QuizExercise)
            else exercise_for_variant(exercise, variant)
        )
    except VariantError as error:
        raise UsageError(f"{exercise.id}: {error}; grader validate finds such values") from None
    if isinstance(exercise, ImplementationExercise):  # the learner is told the values their prompt shows
        shown = shown_params(exercise, variant)
        head = f"Variant of {exercise.id} for {learner}: {variant.describe()}"
        head += f" (the prompt shows {shown}; the rest stay hidden)" if shown else " (the prompt shows none of them)"
        return head + "\n\n" + describe_exercise(filled)
    return f"Variant of {exercise.id} for {learner}: {variant.describe()}\n\n" + describe_exercise(filled)


def given_code_lines(exercise: ImplementationExercise) -> list[str]:
    """The given code as plain text lines: the scaffold (indented) and each YAML given function with its params."""
    lines: list[str] = []
    if exercise.scaffold.strip():
        lines += ["Given code (already in your file):", ""]
        lines += [f"    {line}".rstrip() for line in exercise.scaffold.strip("\n").splitlines()]
    if exercise.given_functions:
        lines += ([""] if lines else []) + ["Functions the grader hands to your code:"]
        for function in exercise.given_functions:
            what = " ".join(function.doc.split()) or function.expression.strip()
            lines.append(f"    {function.name}({', '.join(function.params)}): {what}")
    return lines


def scaffold_entries(exercise: ImplementationExercise) -> set[str]:
    """The entries the scaffold defines at top level: the stub gives them as the scaffold writes them."""
    tree = ast.parse(exercise.scaffold)  # parses: the spec was checked on loading
    defined = {
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    return defined & set(exercise.entries)


def stub(exercise: ImplementationExercise, catalog: Catalog) -> str:
    """``EXERCISE.py``: the scaffold, then each entry it does not define, raising ``NotImplementedError``."""
    lines = [
        '"""'
        + _docstring_text(
            f"{exercise.id}: {exercise.title}\n\n{exercise.prompt.strip()}\n\n"
            f"Check your work, from the handout folder:\n"
            f"    {CHECK_COMMAND.format(file=f'{exercise.id}.py')}"
        ),
        '"""',
        "",
    ]
    scaffold = exercise.scaffold.strip("\n")
    if _NUMPY_IMPORT in (line.strip() for line in scaffold.splitlines()):
        lines += [scaffold, ""]  # the scaffold imports numpy itself, where it means to
    else:
        lines += [_NUMPY_IMPORT, ""] + (["", scaffold, ""] if scaffold else [])
    given = scaffold_entries(exercise)
    for name, entry in exercise.entries.items():
        _check_signature(catalog, exercise, name, entry.signature)
        if name in given:
            continue
        if entry.kind == "class":
            lines += class_stub(name, entry)
            continue
        doc = [f"Return {entry.returns}."]
        if entry.args:
            doc += ["", "Arguments:"] + [f"    {arg}: {KINDS.get(kind, kind)}" for arg, kind in entry.args.items()]
        lines += ["", f"def {entry.signature}:", '    """' + _docstring_text(doc[0])]
        lines += [f"    {line}".rstrip() for line in (_docstring_text(line) for line in doc[1:])]
        if len(doc) > 1:
            lines.append('    """')
        else:
            lines[-1] += '"""'
        lines += [f"    raise NotImplementedError({f'write {name}'!r})", ""]
    text = "\n".join(lines).rstrip("\n") + "\n"
    ast.parse(text)  # a bug here is ours: the signatures and the scaffold were checked
    return text


def handout_code(catalog: Catalog, assignment: str) -> list[str]:
    """The code every learner of ``assignment`` starts from: each implementation exercise's stub, scaffold and all.

    The similarity page leaves it out, since learners share it because they were given it.
    """
    return [
        stub(exercise, catalog)
        for exercise in catalog.assignment(assignment)
        if isinstance(exercise, ImplementationExercise)
    ]


def class_stub(name: str, entry: EntrySpec) -> list[str]:
    """A class entry's skeleton: its constructor, each method and each attribute (as a property), each raising
    ``NotImplementedError``; the spec's ``returns`` as its docstring."""
    lines = ["", f"class {name}:", '    """' + _docstring_text(entry.returns[:1].upper() + entry.returns[1:]) + '."""']
    for method in [f"__init__{entry.signature[len(name) :]}", *entry.methods]:
        title, _, rest = method.partition("(")
        rest = rest.strip()
        with_self = rest if rest.startswith("self") and rest[4:5] in (",", ")", " ") else f"self, {rest}"
        with_self = "self)" if with_self == "self, )" else with_self
        what = name if title == "__init__" else f"{name}.{title}"
        lines += ["", f"    def {title}({with_self}:", f"        raise NotImplementedError({f'write {what}'!r})"]
    for attribute in entry.attributes:
        lines += ["", "    @property", f"    def {attribute}(self):"]
        lines.append(f"        raise NotImplementedError({f'write {name}.{attribute}'!r})")
    return [*lines, ""]


def _docstring_text(text: str) -> str:
    """Text that cannot end a triple-quoted docstring or start an escape."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _check_signature(catalog: Catalog, exercise: ImplementationExercise, name: str, signature: str) -> None:
    try:
        tree = ast.parse(f"def {signature}:\n    pass\n")
        defined = tree.body[0].name if len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef) else None
    except SyntaxError:
        defined = None
    if defined != name:
        raise SpecError(
            f"entries.{name}.signature: {signature!r} is not a Python signature of {name}(...)",
            path=str(catalog.sources.get(exercise.id, exercise.id)),
        )
