"""Find secret text in files meant for learners: the last guard of ``grader release``.

Secret: a hidden check's id (as an id: in YAML or in backticks), its custom
description and hint; a known-wrong solution's path and misconception; a
reference or known-wrong solution's path and code, but for the lines of
an exercise's ``scaffold:`` (code learners are given, so it is published
wherever it also appears in a solution); a quiz's ``correct:``
flags, option reasons and numeric reasons. Short strings are not searched
for (they would match ordinary words); ids are searched only in the forms a
listing of checks would use, since an id such as ``non-negative`` is also an
ordinary phrase.
"""

from __future__ import annotations

import re
from pathlib import Path

from grader.spec.loader import Catalog
from grader.spec.models import ChoiceQuestion, ImplementationExercise, NumericQuestion, QuizExercise

__all__ = ["find_leaks", "secrets_of"]

_MIN_TEXT = 20
_NOT_CODE = ("#", "def ", "import ", "from ", '"', "'", "raise NotImplemented")


Secret = tuple[str, "re.Pattern[str]", "str | None"]


def secrets_of(catalog: Catalog) -> list[Secret]:
    """What must not appear, as (what it is, pattern, exercise id or ``None``).

    A secret with an exercise id is searched for only in that exercise's
    files (those named after it): check ids are unique within an exercise,
    and another exercise may well have a public check of the same name.
    """
    found: list[Secret] = [("an answer key flag 'correct:'", re.compile(r"(?m)^[\s-]*correct\s*:"), None)]

    def text(what: str, value: str | None) -> None:
        value = " ".join((value or "").split())
        if len(value) >= _MIN_TEXT:
            found.append((what, re.compile(r"\s+".join(re.escape(word) for word in value.split())), None))

    given = _given_lines(catalog)
    for exercise in catalog.exercises.values():
        if isinstance(exercise, QuizExercise):
            for question in exercise.questions:
                where = f"{exercise.id} question {question.id}"
                if isinstance(question, ChoiceQuestion):
                    for number, option in enumerate(question.options):
                        text(f"the reason of option {number + 1} of {where}", option.reason)
                elif isinstance(question, NumericQuestion):
                    text(f"the reason_correct of {where}", question.reason_correct)
                    text(f"the reason_wrong of {where}", question.reason_wrong)
                    for mistake in question.mistakes:
                        text(f"a mistake reason of {where}", mistake.reason)
            continue
        assert isinstance(exercise, ImplementationExercise)
        # A hint a public check also gives is published with it: the same words under a hidden check are no secret.
        published = {h.text for c in exercise.checks if c.visibility == "public" for h in c.hint_list()}
        for check in exercise.checks:
            if check.visibility == "public":
                continue
            where = f"hidden check {check.id!r} of {exercise.id}"
            ident = re.escape(check.id)
            found.append((f"the id of {where}", re.compile(rf"(\bid:\s*{ident}(?![\w-]))|(`{ident}`)"), exercise.id))
            for number, hint in enumerate(check.hint_list(), 1):
                if hint.text not in published:
                    text(f"hint {number} of {where}", hint.text)
            text(f"the description of {where}", check.description)
        paths = [(f"the reference solution of {exercise.id}", exercise.reference_solution)]
        paths += [(f"known-wrong solution {w.id!r} of {exercise.id}", w.path) for w in exercise.known_wrong]
        for wrong in exercise.known_wrong:
            text(f"the misconception of known-wrong {wrong.id!r} of {exercise.id}", wrong.misconception)
        for what, relative in paths:
            if relative is None:
                continue
            found.append((f"the path of {what}", re.compile(re.escape(relative)), None))
            name = re.compile(rf"(?<![\w.-]){re.escape(Path(relative).name)}")
            found.append((f"the file name of {what}", name, None))
            for line in _code_lines(catalog.resolve(relative)):
                if line in given:
                    continue
                found.append((f"code of {what} ({line!r})", re.compile(re.escape(line)), None))
    return found


def find_leaks(catalog: Catalog, files: dict[str, str]) -> list[str]:
    """Each secret that appears in ``files`` (relative path to text), as ``WHAT (in FILE)``."""
    leaks = []
    for what, pattern, exercise_id in secrets_of(catalog):
        for name in sorted(files):
            if exercise_id is not None and Path(name).stem != exercise_id:
                continue
            if pattern.search(files[name]):
                leaks.append(f"{what} (in {name})")
    return leaks


def _given_lines(catalog: Catalog) -> set[str]:
    """Every line of code the catalog's exercises give learners (their scaffolds), stripped as solutions' are."""
    return {
        line.strip()
        for exercise in catalog.exercises.values()
        if isinstance(exercise, ImplementationExercise)
        for line in exercise.scaffold.splitlines()
        if line.strip()
    }


def _code_lines(path: Path) -> list[str]:
    """Lines of a solution that say how it works: statements other than imports and signatures."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lines = []
    for raw in source.splitlines():
        line = raw.strip()
        if len(line) < _MIN_TEXT or line.startswith(_NOT_CODE):
            continue
        lines.append(line)
    return lines
