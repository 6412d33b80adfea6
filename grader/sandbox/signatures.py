"""The parameters and defaults of a learner's entry functions, as short facts sent with the import report.

The learner process describes each entry it defines (``describe_defaults``,
run there, after the import); the grader reads the description back with
``clean_defaults``, trusting nothing of it but plain names and short texts.
A description maps each parameter to the ``repr`` of its default, or to
``None`` when it has none; ``*args`` and ``**kwargs`` are kept as keys
``*args`` and ``**kwargs``. A default of a type other than Python's own
numbers, strings and ``None`` is written ``<TypeName object>``: its own
``repr`` would run the learner's code. Standard library only: the learner
process imports this module.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEFAULT_CHARS", "MAX_PARAMETERS", "clean_defaults", "describe_defaults"]

# A real entry has a handful of parameters with short defaults; more is cut, never sent.
MAX_PARAMETERS = 32
MAX_DEFAULT_CHARS = 60
_MAX_NAME_CHARS = 64
_MAX_ENTRIES = 64
_PLAIN_TYPES = (int, float, complex, bool, str, bytes, type(None))
# type's own ``__name__`` slot: a learner's metaclass cannot put a property in front of it.
_TYPE_NAME = type.__dict__["__name__"]


def describe_defaults(module: Any, names: list[str]) -> dict[str, dict[str, str | None]]:
    """For each of ``names`` that ``module`` defines and ``inspect.signature`` can read: parameter -> default text."""
    import inspect
    import itertools

    described: dict[str, dict[str, str | None]] = {}
    for name in names[:_MAX_ENTRIES]:
        try:
            function = getattr(module, name, None)
            if not callable(function):
                continue
            parameters: dict[str, str | None] = {}
            for parameter in itertools.islice(inspect.signature(function).parameters.values(), MAX_PARAMETERS):
                key = str(parameter.name)[:_MAX_NAME_CHARS]
                if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                    parameters["*" + key] = None
                elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
                    parameters["**" + key] = None
                elif parameter.default is inspect.Parameter.empty:
                    parameters[key] = None
                else:
                    parameters[key] = _short_repr(parameter.default)
            described[str(name)] = parameters
        except BaseException:  # an object whose signature cannot be read (a builtin, a learner's odd callable)
            continue
    return described


def _short_repr(value: Any) -> str:
    """``repr`` of a plain value, clipped; for any other value its type's name, so no learner method runs."""
    try:
        if type(value) in _PLAIN_TYPES:
            text = repr(value)
        else:
            text = f"<{_TYPE_NAME.__get__(type(value))} object>"
    except BaseException:  # an int too long to print, a type whose name is not a string
        text = "<object>"
    return text if len(text) <= MAX_DEFAULT_CHARS else text[: MAX_DEFAULT_CHARS - 3] + "..."


def clean_defaults(reported: Any) -> dict[str, dict[str, str | None]]:
    """What a learner process reported with ``describe_defaults``, keeping only well-formed, bounded parts."""
    cleaned: dict[str, dict[str, str | None]] = {}
    if not isinstance(reported, dict):
        return cleaned
    for entry, parameters in list(reported.items())[:_MAX_ENTRIES]:
        if not isinstance(entry, str) or not isinstance(parameters, dict) or len(parameters) > MAX_PARAMETERS:
            continue
        kept: dict[str, str | None] = {}
        for name, default in parameters.items():
            if not isinstance(name, str) or not name.lstrip("*").isidentifier() or len(name) > _MAX_NAME_CHARS + 2:
                continue
            if default is None or (isinstance(default, str) and len(default) <= MAX_DEFAULT_CHARS):
                kept[name] = default
        cleaned[entry] = kept
    return cleaned
