"""Load every spec under ``exercises/`` into a ``Catalog``, or fail with file and line.

Errors read like a compiler's: ``exercises/stable-softmax.yaml:14:
checks[2].points: must be greater than 0``, with "did you mean" for
misspelt keys and property names.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from msgspec import Struct, field

from grader import cache
from grader.checks.registry import property_names
from grader.errors import SpecError, UsageError, did_you_mean
from grader.record.plain import NotPlain, from_plain, to_plain
from grader.safeyaml import YamlProblem, line_of, load_yaml
from grader.spec.crossrefs import SpecProblem, solution_problems
from grader.spec.errorpick import allowed_keys, pick_error
from grader.spec.files import spec_files
from grader.spec.folder import find_exercises_dir
from grader.spec.models import Assignment, Exercise, ImplementationExercise, QuizExercise, Spec

__all__ = ["Catalog", "find_exercises_dir", "line_in", "load_catalog", "load_spec_file"]


def _spec_adapter() -> Any:
    """Pydantic's validator for every kind of spec, built on first use (from the spec cache, grading needs none)."""
    from grader.record.validation import adapter

    return adapter(Spec)


ALL = "all"


class Catalog(Struct):
    """Every exercise and assignment, with the file each came from."""

    root: Path
    exercises: dict[str, Exercise] = field(default_factory=dict)
    assignments: dict[str, Assignment] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)

    def exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id, or a usage error suggesting the closest ids."""
        if exercise_id not in self.exercises:
            raise UsageError(f"unknown exercise {exercise_id!r}{did_you_mean(exercise_id, self.exercises)}")
        return self.exercises[exercise_id]

    def assignment(self, assignment_id: str) -> list[Exercise]:
        """The exercises of an assignment, in order; ``all`` is every exercise."""
        if assignment_id == ALL and ALL not in self.assignments:
            return list(self.exercises.values())
        if assignment_id not in self.assignments:
            known = list(self.assignments) + [ALL]
            raise UsageError(f"unknown assignment {assignment_id!r}{did_you_mean(assignment_id, known)}")
        return [self.exercises[i] for i in self.assignments[assignment_id].exercises]

    def resolve(self, relative: str) -> Path:
        """A path written in a spec, relative to the project root."""
        return (self.root / relative).resolve()


def load_spec_file(path: Path) -> Exercise | Assignment:
    """Parse and validate one spec file (or take it from the cache of validated specs)."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError("the file is not UTF-8 text", path=str(path)) from None
    except OSError as exc:
        raise SpecError(f"cannot read the file ({exc.strerror})", path=str(path)) from None
    key = cache.spec_key(raw)
    cached = cache.load(key, _from_cache)
    if cached is not None:
        cache.remember(cached, key)
        return cached
    spec = _validate(path, text)
    _store(key, spec)
    cache.remember(spec, key)
    return spec


def _from_cache(data: Any) -> Exercise | Assignment:
    """A spec rebuilt from its cache entry (plain data, every field's type checked), without validating it again."""
    return cast("Exercise | Assignment", from_plain(data, Spec))


def _store(key: str, spec: Exercise | Assignment) -> None:
    """Keep ``spec`` as plain data, only when that data rebuilds exactly this spec (else it is validated each time)."""
    try:
        data = to_plain(spec)
        if from_plain(json.loads(json.dumps(data)), Spec) != spec:
            return
    except (NotPlain, ValueError, TypeError, RecursionError):
        return
    cache.store(key, data)


def _validate(path: Path, text: str) -> Exercise | Assignment:
    try:
        data, lines = load_yaml(text)
    except YamlProblem as problem:
        raise SpecError(problem.message, path=str(path), line=problem.line) from None
    if not isinstance(data, dict):
        raise SpecError("a spec must be a mapping with at least 'id' and 'kind'", path=str(path), line=1)
    from pydantic import ValidationError

    from grader.record.validation import to_record

    try:
        spec = to_record(_spec_adapter().validate_python(data))
    except ValidationError as exc:
        error = pick_error(exc.errors(include_url=False), data)
        loc = tuple(error["loc"])
        if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc += (str((error.get("ctx") or {}).get("discriminator", "")).strip("'"),)
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, SpecProblem):  # a cross reference: the validator says where the name is written
            loc += cause.loc
        line, where = line_of(lines, data, loc)
        raise SpecError(f"{where + ': ' if where else ''}{_explain(error, data)}", path=str(path), line=line) from None
    return spec.with_output_nouns() if isinstance(spec, ImplementationExercise) else spec


def load_catalog(directory: str | os.PathLike[str] | None = None, *, only: Iterable[str] = ()) -> Catalog:
    """Load every ``*.yaml``/``*.yml`` spec of the exercises directory and check cross references.

    ``only`` is a shortcut for grading a few exercises: when every id names a
    file ``ID.yaml`` (or ``.yml``), only those files are read. Otherwise, and
    always for ``grader validate``, the whole directory is.
    """
    exercises_dir = find_exercises_dir(directory)
    catalog = Catalog(root=exercises_dir.resolve().parent)
    files = sorted(p for p in exercises_dir.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    wanted = set(only)
    if wanted:
        chosen = [p for p in files if p.stem in wanted]
        if {p.stem for p in chosen} == wanted:
            files = chosen
    for path in files:
        spec = load_spec_file(path)
        if spec.id in catalog.sources:
            raise SpecError(
                f"id: {spec.id!r} is also used by {catalog.sources[spec.id]}",
                path=str(path),
                line=line_in(path, ("id",)),
            )
        catalog.sources[spec.id] = path
        if isinstance(spec, Assignment):
            catalog.assignments[spec.id] = spec
        else:
            catalog.exercises[spec.id] = spec
    for assignment in catalog.assignments.values():
        for number, exercise_id in enumerate(assignment.exercises):
            if exercise_id not in catalog.exercises:
                source = catalog.sources[assignment.id]
                raise SpecError(
                    f"exercises[{number}]: unknown exercise {exercise_id!r}"
                    f"{did_you_mean(exercise_id, catalog.exercises)}",
                    path=str(source),
                    line=line_in(source, ("exercises", number)),
                )
    for exercise in catalog.exercises.values():
        if isinstance(exercise, ImplementationExercise):
            _check_paths(catalog, exercise)
    return catalog


def _check_paths(catalog: Catalog, exercise: ImplementationExercise) -> None:
    for relative, loc in ((found.relative, found.loc) for found in spec_files(exercise)):
        if not catalog.resolve(relative).is_file():
            source = catalog.sources[exercise.id]
            shown = ".".join(f"[{part}]" if isinstance(part, int) else part for part in loc).replace(".[", "[")
            raise SpecError(
                f"{shown}: the solution file {relative!r} does not exist (paths are relative to the "
                "folder holding exercises/)",
                path=str(source),
                line=line_in(source, loc),
            )
    for problem in solution_problems(exercise, catalog.root):
        source = catalog.sources[exercise.id]
        shown = ".".join(f"[{part}]" if isinstance(part, int) else str(part) for part in problem.loc).replace(".[", "[")
        raise SpecError(f"{shown}: {problem}", path=str(source), line=line_in(source, problem.loc))


def line_in(path: Path, loc: tuple[Any, ...]) -> int | None:
    """The line of ``loc`` in the spec file at ``path`` (read again: only an error needs it)."""
    try:
        data, lines = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YamlProblem):
        return None
    return line_of(lines, data, loc)[0]


_MESSAGES = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "missing": "is required",
    "string_pattern_mismatch": "must be lower-case words joined by hyphens (like 'sums-to-one')",
    "too_short": "must not be empty",
}


def _explain(error: Mapping[str, Any], data: Any) -> str:
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind in _MESSAGES:
        shown = {key: f"{value:g}" if isinstance(value, float) else value for key, value in context.items()}
        return _MESSAGES[kind].format(**shown)
    if kind == "extra_forbidden":
        name = str(error["loc"][-1])
        model = allowed_keys(tuple(error["loc"][:-1]))
        if model is None:
            return f"unknown key {name!r}{did_you_mean(name, _all_field_names())}"
        what, keys = model
        if name == "answer" and what == "ChoiceQuestion":
            return (
                "unknown key 'answer': a choice question has no answer key; mark each right option "
                "with 'correct: true' under options"
            )
        close = did_you_mean(name, keys)
        return f"unknown key {name!r}{close or ' (the keys here are: ' + ', '.join(keys) + ')'}"
    if kind == "union_tag_invalid":
        tag = str(context.get("tag", ""))
        discriminator = str(context.get("discriminator", "")).strip("'")
        choices = (
            property_names()
            if discriminator == "property"
            else [t.strip(" '") for t in str(context.get("expected_tags", "")).split(",")]
        )
        return f"unknown {discriminator} {tag!r}{did_you_mean(tag, choices)} (expected one of: {', '.join(choices)})"
    if kind == "union_tag_not_found":
        return f"needs a {str(context.get('discriminator', 'kind')).strip(chr(39))!s} key"
    message = str(error.get("msg", "is invalid"))
    return message.replace("Value error, ", "").replace("Input should be", "must be")


@functools.lru_cache(maxsize=1)
def _all_field_names() -> set[str]:
    """Every key a spec may use, for "did you mean": gathered when a spec first has an unknown key."""
    from grader.checks.cases import (
        ArrayDraw,
        ExamplesGenerator,
        MatrixGenerator,
        MatrixSpec,
        RandomGenerator,
        RandomSpec,
    )
    from grader.checks.registry import CHECK_TYPES
    from grader.record import Record
    from grader.spec import models

    names: set[str] = set()
    records: tuple[type[Record], ...] = (
        ImplementationExercise,
        QuizExercise,
        Assignment,
        models.EntrySpec,
        models.KnownWrong,
        models.Option,
        models.ChoiceQuestion,
        models.NumericQuestion,
        models.NumericMistake,
        models.PublicExample,
        ArrayDraw,
        RandomSpec,
        ExamplesGenerator,
        RandomGenerator,
        MatrixSpec,
        MatrixGenerator,
        *CHECK_TYPES,
    )
    for record in records:
        names.update(record.model_fields)
    return names
