"""The learner handout: what ``grader release --out DIR`` writes, and nothing secret.

Layout of ``DIR``::

    README.md             the exercises, their points, and how to check your work
    EXERCISE.md           one page per exercise: prompt, signatures, examples, public checks
    EXERCISE.py           one stub per implementation exercise, to fill in
    answers.yaml          the answers template for every quiz (empty answers)
    public-checks/quizzes.json  each quiz's form (question ids, types, option counts; no answer key), so
                          ``grader grade answers.yaml --public`` says whether each answer is read
    public-checks/        the specs reduced to their public checks and those checks' case sets,
                          so ``grader grade EXERCISE.py --public``, run in ``DIR``, works
                          (the marker file below makes ``public-checks`` the exercises folder there)

Only learner-facing parts of a spec are copied, by allow-list: prompts,
signatures, public examples, public checks and their case sets. Hidden
checks, known-wrong solutions, reference solutions and answer keys (correct
options, option reasons, numeric answers) never are. Quizzes have no public
checks (grading one needs its key), so ``public-checks`` holds no quiz spec; their
questions and options are in their pages and in ``answers.yaml``, and the form
of their answers in ``public-checks/quizzes.json``. As a last
guard, every file is scanned for secret text before the handout is moved into
place (``grader.authoring.leaks``). Files are written in sorted order with
fixed content: the same catalog gives the same bytes.

``release_assignment`` writes the handout of one assignment, and first
self-tests its exercises (``grader validate``): a handout of exercises whose
reference fails its checks, or whose known-wrong solutions slip through,
would grade learners wrongly, so it is refused unless forced.

The handout carries no reference code: the public checks that compare with
the reference solution (``matches-reference``, ``shape-and-dtype``, the
Jacobian checks) find its answers to their calls, computed at release, in
``public-checks/EXERCISE.answers.json`` (the public spec's
``reference_answers``); an exercise's given functions (its public
``functions:`` file) are copied as ``public-checks/EXERCISE.functions.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from grader.authoring.handout import CHECK_COMMAND, KINDS, class_stub, params_note, stub
from grader.authoring.leaks import find_leaks
from grader.authoring.validate_quiz import located
from grader.engine.case_variants import default_exercise
from grader.engine.quiz import QUIZ_FORMS, letters, quiz_form
from grader.engine.variants import VariantError
from grader.errors import GraderError, SpecError, UsageError
from grader.spec.folder import HANDOUT_MARKER, HANDOUT_SPECS
from grader.spec.loader import ALL, Catalog, load_catalog
from grader.spec.models import ChoiceQuestion, Exercise, ImplementationExercise, QuizExercise

__all__ = ["MARKER", "assignment_catalog", "public_spec", "release_assignment", "release_handout"]

MARKER = HANDOUT_MARKER
CHECKS_DIR = HANDOUT_SPECS


def release_handout(
    catalog: Catalog, *, out: str | os.PathLike[str], replace: bool = False, session: Any = None
) -> list[str]:
    """Write the handout for ``catalog`` to ``out``; return the files written, relative to it.

    ``out`` must be new or empty, or (with ``replace``) a previous handout,
    which is then removed. The handout is built in a temporary folder next to
    ``out`` and renamed into place, so ``out`` is never half-written.
    ``session``: a ``GradingSession`` whose sandbox runs the reference
    solutions for the public checks' expected values, or one is opened.
    """
    target = Path(out)
    previous = target.exists() and any(target.iterdir()) if target.is_dir() else target.exists()
    if previous and not (replace and (target / MARKER).is_file()):
        why = "is not empty" if target.is_dir() else "is a file"
        hint = (
            "; pass --replace to replace a previous handout"
            if (target / MARKER).is_file()
            else "; choose a new or empty folder"
        )
        raise UsageError(f"{target}: {why}{hint}")
    catalog = _default_variants(catalog)
    files = handout_files(catalog, public_answers(catalog, session=session))
    leaks = find_leaks(catalog, files)
    if leaks:
        raise SpecError(f"the handout would reveal {leaks[0]}; release stopped, nothing was written")
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    building.chmod(0o755)  # mkdtemp makes it private; a handout is meant to be shared
    try:
        for name in sorted(files):
            path = building / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[name].encode("utf-8"))
        _check_public_specs(building / CHECKS_DIR)
        if previous:
            shutil.rmtree(target)
        elif target.is_dir():
            target.rmdir()
        os.replace(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return sorted(files)


def release_assignment(
    catalog: Catalog,
    assignment: str,
    *,
    out: str | os.PathLike[str],
    replace: bool = False,
    force: bool = False,
    session: Any = None,
) -> list[str]:
    """Self-test the exercises of ``assignment``, then write their handout to ``out``; return the files written.

    A validation problem stops the release (a ``SpecError`` naming the
    exercise and the problem) unless ``force``. ``session``: a
    ``GradingSession`` to validate with, or one is opened.
    """
    chosen = assignment_catalog(catalog, assignment)
    if not force:
        problems = validation_problems(chosen, session=session)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise SpecError(
                f"assignment {assignment!r} fails validation: {problems[0]}{more}; run 'grader validate' "
                "for every line, fix it, or pass --force to release anyway"
            )
    return release_handout(chosen, out=out, replace=replace, session=session)


def _default_variants(catalog: Catalog) -> Catalog:
    """``catalog`` with each implementation exercise with params as its default variant (``default_exercise``)."""
    exercises = dict(catalog.exercises)
    for key, exercise in catalog.exercises.items():
        if isinstance(exercise, ImplementationExercise) and exercise.params:
            try:
                exercises[key] = default_exercise(exercise)
            except VariantError as error:
                raise SpecError(f"{located(catalog, key, error)}; release stopped, nothing was written") from None
    return Catalog(root=catalog.root, exercises=exercises, assignments=catalog.assignments, sources=catalog.sources)


def assignment_catalog(catalog: Catalog, assignment: str) -> Catalog:
    """The part of ``catalog`` an assignment's handout shows: its exercises, and the assignment itself."""
    exercises = catalog.assignment(assignment)
    chosen = Catalog(
        root=catalog.root,
        exercises={e.id: e for e in exercises},
        sources={e.id: catalog.sources[e.id] for e in exercises if e.id in catalog.sources},
    )
    if assignment in catalog.assignments:
        chosen.assignments[assignment] = catalog.assignments[assignment]
        chosen.sources[assignment] = catalog.sources[assignment]
    elif assignment == ALL:
        chosen.assignments.update(catalog.assignments)
    return chosen


def validation_problems(catalog: Catalog, *, session: Any = None) -> list[str]:
    """``grader validate``'s problems for every exercise of ``catalog``, one line each."""
    from grader.authoring.validate import validate_catalog

    report = validate_catalog(catalog, session=session)
    return [f"{line.exercise} {line.subject}: {line.message}" for line in report.problems]


def public_answers(catalog: Catalog, *, session: Any = None) -> dict[str, str]:
    """For each exercise whose public checks compare with its reference solution, the reference's answers
    to their calls (``instructor_runs.answers_file``), run in the sandbox as grading runs it."""
    from grader.engine.instructor_runs import answers_file, reference_failure, reference_outcomes
    from grader.engine.plan import build_plan

    wanted = [
        exercise
        for exercise in catalog.exercises.values()
        if isinstance(exercise, ImplementationExercise)
        and any(check.visibility == "public" and check.calls_reference() for check in exercise.checks)
    ]
    if not wanted:
        return {}
    from grader.grading import GradingSession

    grading = session or GradingSession(catalog, allow_weak_sandbox=True)  # the course's own solutions only
    written: dict[str, str] = {}
    try:
        for exercise in wanted:
            plan = build_plan(exercise, [check for check in exercise.checks if check.visibility == "public"])
            outcomes = reference_outcomes(exercise, plan, grading.factory, grading.memo, catalog.root)
            grading.factory.release()  # a reference's process asked between submissions is shared with none
            for planned in plan.checks:
                failed = reference_failure(plan, planned, outcomes)
                if failed is not None:
                    raise SpecError(
                        f"{exercise.id}: check {planned.check.id}: the reference solution {failed[1]} on "
                        f"{plan.call_text(planned, failed[0])}; release stopped, nothing was written"
                    )
            written[exercise.id] = answers_file(plan, outcomes)
    finally:
        if session is None:
            grading.close()
    return written


def handout_files(catalog: Catalog, answers: dict[str, str] | None = None) -> dict[str, str]:
    """Every file of the handout: relative path to text.

    ``answers``: each exercise's reference answers to its public checks'
    calls (``public_answers``), written beside its public spec.
    """
    answers = answers or {}
    files: dict[str, str] = {
        MARKER: "A learner handout written by 'grader release'. Safe to share.\n",
        "README.md": _index(catalog),
    }
    quizzes = [e for e in catalog.exercises.values() if isinstance(e, QuizExercise)]
    if quizzes:
        files["answers.yaml"] = answers_template(quizzes)
        forms = {"quizzes": [quiz_form(quiz) for quiz in quizzes]}
        files[f"{CHECKS_DIR}/{QUIZ_FORMS}"] = json.dumps(forms, indent=2, sort_keys=True) + "\n"
    released: set[str] = set()
    for exercise in catalog.exercises.values():
        files[f"{exercise.id}.md"] = _page(exercise)
        if isinstance(exercise, ImplementationExercise):
            files[f"{exercise.id}.py"] = stub(exercise, catalog)
            spec = public_spec(exercise)
            if spec is not None:
                if exercise.id in answers:
                    spec["reference_answers"] = f"{CHECKS_DIR}/{exercise.id}.answers.json"
                    files[spec["reference_answers"]] = answers[exercise.id]
                if exercise.functions is not None:
                    spec["functions"] = f"{CHECKS_DIR}/{exercise.id}.functions.py"
                    files[spec["functions"]] = catalog.resolve(exercise.functions).read_text(encoding="utf-8")
                files[f"{CHECKS_DIR}/{exercise.id}.yaml"] = _dump(spec, f"Public checks of {exercise.id}")
                released.add(exercise.id)
    for assignment in catalog.assignments.values():
        kept = [i for i in assignment.exercises if i in released]
        if kept:
            spec = {"id": assignment.id, "kind": "assignment", "title": assignment.title, "exercises": kept}
            files[f"{CHECKS_DIR}/{assignment.id}.yaml"] = _dump(spec, f"Assignment {assignment.id}, public parts")
    return files


def _written(check: dict[str, Any]) -> dict[str, Any]:
    """A check's fields in the order a spec writes them: its id and property first.

    A hint premised on a known mistake is left out: the handout carries no known-wrong solution, so its
    premise could never be shown there.
    """
    hints = check.get("hints")
    if isinstance(hints, list):
        kept = [hint for hint in hints if not hint.get("when", {}).get("like")]
        check = {key: value for key, value in check.items() if key != "hints"} | ({"hints": kept} if kept else {})
    return {"id": check["id"], "property": check["property"], **check}


def public_spec(exercise: ImplementationExercise) -> dict[str, Any] | None:
    """The spec reduced to its public checks and their case sets; ``None`` without public checks."""
    public = [check for check in exercise.checks if check.visibility == "public"]
    if not public:
        return None
    used = {name for check in public for name in check.cases}
    spec: dict[str, Any] = {"id": exercise.id, "kind": exercise.kind, "title": exercise.title}
    if exercise.lesson:
        spec["lesson"] = exercise.lesson
    spec["prompt"] = exercise.prompt
    spec["entries"] = {
        name: entry.model_dump(mode="python", exclude_defaults=True) for name, entry in exercise.entries.items()
    }
    if exercise.examples:
        spec["examples"] = [example.model_dump(mode="python", exclude_defaults=True) for example in exercise.examples]
    cases = {
        name: [g.model_dump(mode="python", exclude_defaults=True) for g in generators]
        for name, generators in exercise.cases.items()
        if name in used
    }
    if exercise.given_functions:
        spec["given_functions"] = [
            function.model_dump(mode="python", exclude_defaults=True) for function in exercise.given_functions
        ]
    if cases:
        spec["cases"] = cases
    spec["checks"] = [_written(check.model_dump(mode="python", exclude_defaults=True)) for check in public]
    if exercise.time_limit != ImplementationExercise.model_fields["time_limit"].default:
        spec["time_limit"] = exercise.time_limit
    if exercise.gate is not None and any(check.id == exercise.gate for check in public):
        spec["gate"] = exercise.gate
    return spec


def answers_template(quizzes: list[QuizExercise]) -> str:
    """``answers.yaml``: every quiz and question id with an empty answer, options listed in comments."""
    lines = [
        "# Your answers to the quizzes. Write each answer after its colon, then hand in this file.",
        "#   single choice:   one option letter, like  A",
        "#   multiple choice: a list of option letters, like  [A, C]",
        "#   numeric:         a number",
        "# Quizzes are graded when you hand in your work. To check that each answer is read, run",
        "#   grader grade answers.yaml --public",
        "# (it says nothing about whether an answer is right).",
        "",
    ]
    for quiz in quizzes:
        lines.append(f"{quiz.id}:")
        for question in quiz.questions:
            lines += [f"  # {line}".rstrip() for line in question.prompt.strip().splitlines()]
            if isinstance(question, ChoiceQuestion):
                kind = "one letter" if question.type == "single" else "a list of letters"
                lines.append(f"  # ({question.type} choice, {_points(question.points)}: {kind})")
                lines += [
                    f"  #   {letter}. {line}"
                    for letter, option in zip(letters(len(question.options)), question.options, strict=True)
                    for line in [" ".join(option.text.split())]
                ]
            else:
                lines.append(f"  # (numeric, {_points(question.points)}: a number)")
            lines += [f"  {question.id}:", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _index(catalog: Catalog) -> str:
    lines = ["# Handout", "", "| Exercise | Kind | Points | Page | Your file |", "| --- | --- | --- | --- | --- |"]
    for exercise in catalog.exercises.values():
        mine = f"`{exercise.id}.py`" if isinstance(exercise, ImplementationExercise) else "`answers.yaml`"
        lines.append(
            f"| {exercise.id} | {exercise.kind} | {exercise.max_score:g} | "
            f"[{exercise.id}.md]({exercise.id}.md) | {mine} |"
        )
    # the notebook check's example names an exercise of this handout, so that it runs as written
    example = next((e.id for e in catalog.exercises.values() if isinstance(e, ImplementationExercise)), "EXERCISE")
    if catalog.assignments:
        lines += ["", "Assignments:", ""]
        lines += [f"- {a.id} ({a.title}): {', '.join(a.exercises)}" for a in catalog.assignments.values()]
    lines += [
        "",
        "## Checking your work",
        "",
        "Write your code in the stub files, then run the public checks from this folder:",
        "",
        "```sh",
        CHECK_COMMAND.format(file="EXERCISE.py"),
        "```",
        "",
        "In a Jupyter notebook opened in this folder, check the cells you have run instead:",
        "",
        "```python",
        "import grader",
        f'grader.check("{example}")',
        "```",
        "",
        "Hidden checks run only when your work is graded; each page says how many there are.",
        "Quiz answers go in `answers.yaml`; they are graded when you hand in. "
        "`grader grade answers.yaml --public` says whether each answer is read, not whether it is right.",
        "",
    ]
    return "\n".join(lines)


def _page(exercise: Exercise) -> str:
    kind = {"implementation": "Implementation exercise", "witness": "Witness exercise", "quiz": "Quiz"}[exercise.kind]
    lines = [
        f"# {exercise.id}: {exercise.title}",
        "",
        f"{kind}, {_points(exercise.max_score)}." + (f" Lesson: {exercise.lesson}." if exercise.lesson else ""),
        "",
    ]
    if exercise.prompt.strip():
        lines += [exercise.prompt.strip(), ""]
    if isinstance(exercise, QuizExercise):
        lines += [f"Answer in `answers.yaml`, under `{exercise.id}:`.", ""]
        if exercise.params:
            lines += [params_note(exercise), ""]
        for question in exercise.questions:
            lines += [
                f"## {question.id}",
                "",
                f"{question.type.capitalize()}"
                + (" choice" if question.type != "numeric" else "")
                + f", {_points(question.points)}.",
                "",
                question.prompt.strip(),
                "",
            ]
            if isinstance(question, ChoiceQuestion):
                lines += [
                    f"- {letter}. {option.text.strip()}"
                    for letter, option in zip(letters(len(question.options)), question.options, strict=True)
                ]
                lines.append("")
        return "\n".join(lines).rstrip("\n") + "\n"
    lines += ["## What to write", "", f"In `{exercise.id}.py`:", "", "```python"]
    for name, entry in exercise.entries.items():
        if entry.kind == "class":  # the skeleton the stub holds: its constructor, methods and attributes
            lines += class_stub(name, entry)[1:-1]
        else:
            lines += [f"def {entry.signature}:", f"    # returns {entry.returns}"]
    lines += ["```", ""]
    if exercise.scaffold.strip():
        lines += ["Your file starts with this code, given to you:", "", "```python"]
        lines += [exercise.scaffold.strip("\n"), "```", ""]
    if exercise.given_functions:
        lines += ["The functions the grader hands to your code:", ""]
        for function in exercise.given_functions:
            what = " ".join(function.doc.split()) or f"returns `{function.expression.strip()}`"
            lines.append(f"- `{function.name}({', '.join(function.params)})`: {what}")
        lines.append("")
    arguments = [(arg, kind) for entry in exercise.entries.values() for arg, kind in entry.args.items()]
    if arguments:
        described = "; ".join(f"`{arg}` is {KINDS.get(kind, kind)}" for arg, kind in arguments)
        lines += [f"Arguments: {described}.", ""]
    if exercise.examples:
        lines += ["## Examples", "", "```python"]
        for example in exercise.examples:
            lines += [f">>> {example.call}", example.result] + ([f"# {example.note}"] if example.note else [])
        lines += ["```", ""]
    public = [check for check in exercise.checks if check.visibility == "public"]
    hidden = len(exercise.checks) - len(public)
    lines += ["## Checks", ""]
    if public:
        command = CHECK_COMMAND.format(file=f"{exercise.id}.py")
        lines += [f"Run these from the handout folder with `{command}`:", ""]
        lines += [
            f"- `{check.id}` ({_points(check.points)}): {check.describe(exercise.entry_of(check))}" for check in public
        ]
        lines.append("")
    else:
        lines += ["No check of this exercise can be run before you hand in.", ""]
    if hidden:
        lines += [f"{hidden} more check{'s run' if hidden != 1 else ' runs'} only when your work is graded.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _points(value: float) -> str:
    return f"{value:g} point{'s' if value != 1 else ''}"


class _Dumper(yaml.SafeDumper):
    """Block style for mappings, flow style for lists of plain values, ``|`` for multi-line text."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    def flat(items: list[Any]) -> bool:
        return all(flat(i) if isinstance(i, list) else not isinstance(i, dict) for i in items)

    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat(data))


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(tuple, lambda dumper, data: _represent_list(dumper, list(data)))


def _dump(spec: dict[str, Any], title: str) -> str:
    body = yaml.dump(spec, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return (
        f"# {title}, for checking your work before you hand it in:\n"
        f"#   {CHECK_COMMAND.format(file='FILE')}   (from the handout folder)\n"
        "# Hidden checks run only when your work is graded.\n" + body
    )


def _check_public_specs(directory: Path) -> None:
    """The reduced specs must load as a catalog; if they do not, the fault is the grader's."""
    if not directory.is_dir():
        return
    try:
        load_catalog(directory)
    except SpecError as error:
        raise GraderError(
            f"the handout's public checks do not load ({error}); this is a bug in grader release"
        ) from None
