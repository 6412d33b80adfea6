"""How a record's fields are declared: defaults and pydantic ``Field`` options, kept as plain data.

Every part of :mod:`grader.record` reads these: ``model`` (the ``Record``
class, used without pydantic), ``validation`` (which builds a pydantic model
from a record class) and ``plain`` (records as JSON data), so none of them
imports another to know them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from msgspec import Struct, field

__all__ = ["ConfigDict", "Field", "FieldSpec", "field_validator", "is_record_class", "model_validator"]

UNSET: Any = object()


class FieldSpec(Struct, frozen=True, eq=False):
    """One field as declared: its default and pydantic ``Field`` arguments (its type is the class's annotation)."""

    default: Any = UNSET
    default_factory: Callable[[], Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def required(self) -> bool:
        return self.default is UNSET and self.default_factory is None

    def make_default(self) -> Any:
        if self.default_factory is not None:
            return self.default_factory()
        return copy.deepcopy(self.default)


def Field(default: Any = UNSET, *, default_factory: Callable[[], Any] | None = None, **options: Any) -> Any:
    """Declare a field's default and constraints (``gt``, ``pattern``, ``min_length``, ``description``...)
    with pydantic's own argument names; used in annotations too (``Annotated[..., Field(discriminator=...)]``)."""
    return FieldSpec(default=default, default_factory=default_factory, options=options)


def ConfigDict(**options: Any) -> dict[str, Any]:
    """A record's pydantic configuration (``extra``, ``frozen``), applied when it is validated."""
    return dict(options)


def model_validator(*, mode: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a method that checks a whole validated record; it raises ``ValueError`` to refuse it."""
    if mode != "after":
        raise ValueError("records support model validators of mode 'after' only")

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        function.__record_check__ = "model"  # type: ignore[attr-defined]
        return function

    return mark


def field_validator(*names: str) -> Callable[[Any], Any]:
    """Mark a classmethod that checks (and may return a changed) value of the named fields."""

    def mark(method: Any) -> Any:
        target: Any = method.__func__ if isinstance(method, classmethod) else method
        target.__record_check__ = ("field", names)
        return method

    return mark


def is_record_class(value: Any) -> bool:
    """Whether ``value`` is a record class (``model.Record`` or a subclass): it declares its fields and checks."""
    return isinstance(value, type) and hasattr(value, "model_fields") and hasattr(value, "__record_checks__")
