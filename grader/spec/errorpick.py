"""Which of pydantic's errors to show for a spec, and which keys a location allows.

Where a value may take several forms (a case generator is ``examples:`` or
``random:``; an argument is drawn from a shape or a list), pydantic reports
the errors of every form. The one to show is the form the author wrote: the
error reaching deepest into the spec as written, so a typo inside a
``random:`` block is reported there, not as a missing ``examples:``.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar, Union

__all__ = ["allowed_keys", "pick_error"]

_Error = TypeVar("_Error", bound=Mapping[str, Any])


def pick_error(errors: Sequence[_Error], data: Any) -> _Error:
    """The error to report: the first, or, among the alternatives of the form it is in, the deepest into ``data``."""
    first = errors[0]
    branch = _branch_point(tuple(first["loc"]), data)
    if branch is None:
        return first
    prefix = tuple(first["loc"])[:branch]
    rivals = [error for error in errors if tuple(error["loc"])[:branch] == prefix]
    return max(rivals, key=lambda error: _reach(tuple(error["loc"]), data, error["type"]))


def _branch_point(loc: tuple[Any, ...], data: Any) -> int | None:
    """The index in ``loc`` of the first label of an undiscriminated union's form (a type name), if any."""
    current = data
    for index, part in enumerate(loc[:-1]):
        if (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        ):
            current = current[part]
        elif isinstance(part, str) and (part[:1].isupper() or "[" in part):
            return index
    return None


def _reach(loc: tuple[Any, ...], data: Any, kind: str) -> tuple[int, int]:
    """How deep ``loc`` goes into ``data`` (an unknown or missing key counts at its mapping), then a preference
    for an unknown key (a typo says most) over a missing one."""
    depth, current = 0, data
    for part in loc:
        if (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        ):
            current = current[part]
        else:
            continue
        depth += 1
    if kind == "extra_forbidden":
        depth -= 1
    return depth, {"extra_forbidden": 2, "missing": 0}.get(kind, 1)


def allowed_keys(loc: tuple[Any, ...]) -> tuple[str, list[str]] | None:
    """The record class at ``loc`` (a pydantic location in a spec) and its keys; ``None`` when not known."""
    from grader.record import Record
    from grader.spec.models import Spec

    current: Any = Spec
    for part in loc:
        current = _strip(current)
        if typing.get_origin(current) in (Union, types.UnionType):  # Union[A, B] and A | B
            current = _member(current, part)
        elif isinstance(current, type) and issubclass(current, Record):
            if part not in current.model_fields:
                return None
            current = typing.get_type_hints(current, include_extras=True)[part]
        elif typing.get_origin(current) is list:
            current = typing.get_args(current)[0]
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
        if current is None:
            return None
    current = _strip(current)
    if isinstance(current, type) and issubclass(current, Record):
        return current.__name__, list(current.model_fields)
    return None


def _strip(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _member(union: Any, label: Any) -> Any:
    """The form of ``union`` that pydantic's location label names: a class name or a tag value."""
    for member in typing.get_args(union):
        member = _strip(member)
        if getattr(member, "__name__", None) == label:
            return member
        hints = typing.get_type_hints(member, include_extras=True) if isinstance(member, type) else {}
        for hint in hints.values():
            if typing.get_origin(hint) is Literal and label in typing.get_args(hint):
                return member
    return None
