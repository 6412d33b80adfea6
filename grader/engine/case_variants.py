"""An implementation exercise with params as one learner's variant: its case values computed, its prompt filled in.

``exercise_for_variant`` turns the template (``grader.spec.params``) into an
ordinary exercise: each value written ``{expr: "..."}`` in a case set or a
check's ``where:`` becomes the value of its expression for the learner's
params (the relation language, ``grader.checks.expressions``, never eval),
and each ``{name}`` of the prompt the learner's value. The engine then plans
and grades it as any exercise; a copy has no spec file of its own, so its
plan and its instructor answers are kept for the session only, never on disk
under the template's key.

What a learner is told of the variant: the values their prompt shows
(``{name}`` placeholders), named in the exercise's reason; the JSON result
records every value (``ExerciseResult.variant``) for the instructor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from grader.checks.expressions import ExpressionError, evaluate_expression, parse_expression
from grader.engine.variants import Variant, VariantError, end_variant, shown_value
from grader.results import ExerciseResult
from grader.spec.models import ImplementationExercise
from grader.spec.params import computed_text, fill_text, placeholders

__all__ = ["default_exercise", "exercise_for_variant", "grade_variant", "shown_params"]


def exercise_for_variant(exercise: ImplementationExercise, variant: Variant) -> ImplementationExercise:
    """``exercise`` with ``variant``'s values in its cases, checks' ``where:`` and prompt; no params left.

    Raises ``VariantError`` (located where the expression is written) when a value cannot be computed.
    """
    cases = {
        name: [_generator(generator, variant, ("cases", name, number)) for number, generator in enumerate(generators)]
        for name, generators in exercise.cases.items()
    }
    checks = [_check(check, variant, number) for number, check in enumerate(exercise.checks)]
    update = {"cases": cases, "checks": checks, "prompt": fill_text(exercise.prompt, variant.shown()), "params": {}}
    return cast(ImplementationExercise, exercise.model_copy(update=update))


def default_exercise(exercise: ImplementationExercise) -> ImplementationExercise:
    """The default variant (every param at its low end) of ``exercise``, its prompt saying so: what a handout's
    public checks grade, since a handout holds no secret to draw a learner's own values with."""
    variant = end_variant(exercise.id, exercise.params)
    concrete = exercise_for_variant(exercise, variant)
    note = (
        f"\n\nIn this handout the checks use the default values {variant.describe()}; "
        "your own values are used when your work is graded."
    )
    return cast(ImplementationExercise, concrete.model_copy(update={"prompt": concrete.prompt.rstrip() + note}))


def grade_variant(
    exercise: ImplementationExercise,
    variant: Variant | None,
    grade: Callable[[ImplementationExercise], ExerciseResult],
) -> ExerciseResult:
    """``grade`` of the learner's variant of ``exercise`` (``None``: an exercise without params, graded as it is).

    The result records the values; its reason names those the prompt showed. Values that cannot be computed
    for this learner are the exercise's error, said as such, never the learner's.
    """
    if variant is None:
        return grade(exercise)
    try:
        concrete = exercise_for_variant(exercise, variant)
    except VariantError:
        result = ExerciseResult.unscored(
            exercise,
            "error",
            "This exercise could not be graded for your variant: a fault of the exercise, not of your code; "
            "please tell your instructor.",
        )
    else:
        result = grade(concrete)
        shown = shown_params(exercise, variant)
        if shown and result.status in ("passed", "failed"):
            result.reason = f"{result.reason} Graded on your variant of the exercise: {shown}."
    result.variant = dict(variant.values)
    return result


def shown_params(exercise: ImplementationExercise, variant: Variant) -> str:
    """``a = 2.5, n = 4``: the values the exercise's prompt shows the learner (``""`` when it shows none)."""
    shown = set(placeholders(exercise.prompt))
    return ", ".join(f"{name} = {shown_value(value)}" for name, value in variant.values.items() if name in shown)


def _check(check: Any, variant: Variant, number: int) -> Any:
    """One check with its ``where:`` values computed."""
    where = getattr(check, "where", None)
    if not isinstance(where, dict) or not where:
        return check
    computed = {
        key: [_value(value, variant, ("checks", number, "where", key, index)) for index, value in enumerate(values)]
        for key, values in where.items()
    }
    return check.model_copy(update={"where": computed})


def _generator(generator: Any, variant: Variant, at: tuple[str | int, ...]) -> Any:
    """One case generator with its ``{expr: ...}`` values computed."""
    if hasattr(generator, "examples"):
        examples = [
            {arg: _value(value, variant, (*at, "examples", index, arg)) for arg, value in example.items()}
            for index, example in enumerate(generator.examples)
        ]
        return generator.model_copy(update={"examples": examples})
    kind = next((name for name in ("random", "matrices") if hasattr(generator, name)), None)
    if kind is None:  # a class entry's scripts, written out as they are
        return generator
    spec = getattr(generator, kind)
    args = {
        arg: [_value(value, variant, (*at, kind, "args", arg, index)) for index, value in enumerate(values)]
        if isinstance(values, list)
        else values
        for arg, values in spec.args.items()
    }
    return generator.model_copy(update={kind: spec.model_copy(update={"args": args})})


def _value(value: Any, variant: Variant, loc: tuple[str | int, ...]) -> Any:
    """A case value as written, or the value of its expression for the variant (arrays as lists, as YAML gives)."""
    text = computed_text(value)
    if text is None:
        return value
    try:
        result = evaluate_expression(parse_expression(text), variant.values, [])
    except (ExpressionError, ArithmeticError, TypeError, ValueError) as error:
        raise VariantError(f"{text!r} cannot be computed for {variant.describe()}: {error}", *loc) from None
    array = np.asarray(result)
    if array.dtype.kind not in "biuf":
        raise VariantError(f"{text!r} gives no numbers for {variant.describe()}", *loc)
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise VariantError(f"{text!r} gives a value that is not finite for {variant.describe()}", *loc)
    return array.tolist()
