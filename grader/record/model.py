"""``Record``: a frozen record of validated values, declared the pydantic way and used without pydantic.

Validating a record (``Record(**data)``, ``model_validate``) asks
:mod:`grader.record.validation`, imported then; everything else (defining a
class, reading it from the spec cache, grading with it) needs only the
standard library.
"""

from __future__ import annotations

from typing import Any

from grader.record.fields import UNSET, FieldSpec

__all__ = ["Record"]


def _is_class_variable(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


class Record:
    """A frozen record of validated values; subclasses declare fields as annotations.

    ``Record(**data)`` validates (with pydantic, imported then); records read
    from the spec cache or built by the validator skip that.

    A record may also carry its ``source_key``: the cache key of the file it
    was read from (see :func:`grader.cache.remember`), so that what is
    derived from it (an exercise's plan) can be cached under that key. The
    key is not a field: it takes no part in equality, hashing, dumping or
    pickling, and a copy (``model_copy``, ``copy.copy``) has none, since a
    copy may differ from the file.
    """

    __slots__ = ("__dict__", "_source_key")

    model_config: dict[str, Any] = {}
    model_fields: dict[str, FieldSpec] = {}
    _pydantic_model: Any = None  # the class's own validating model, built on first use (record.validation)
    _plain_field_types: dict[str, Any] | None = None  # the class's own evaluated field types (record.plain)
    __record_checks__: tuple[tuple[str, Any], ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, FieldSpec] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "model_fields", {}) if issubclass(base, Record) else {})
        annotated = cls.__dict__.get("__annotations__", {})
        for name, annotation in annotated.items():
            if _is_class_variable(annotation) or name.startswith("_") or name in ("model_config", "model_fields"):
                continue
            if name in _RESERVED:  # Record's own attribute would hide the field's value
                raise TypeError(f"{cls.__name__}.{name}: a record field may not be named {name!r}")
            declared = cls.__dict__.get(name, UNSET)
            fields[name] = declared if isinstance(declared, FieldSpec) else FieldSpec(declared)
            if name in cls.__dict__:
                delattr(cls, name)  # the default lives in model_fields; an instance always has every field
        for name in fields.keys() - annotated.keys():
            if name in cls.__dict__:  # pydantic refuses this too: the value would silently change nothing
                raise TypeError(
                    f"{cls.__name__}.{name} overrides a field without an annotation; write '{name}: <type> = ...'"
                )
        cls.model_fields = fields
        checks: dict[str, Any] = {}  # a subclass's method of the same name replaces its base's, as in pydantic
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                target = member.__func__ if isinstance(member, classmethod) else member
                mark = getattr(target, "__record_check__", None)
                if mark is not None:
                    checks[name] = mark
        cls.__record_checks__ = tuple(checks.items())

    def __init__(self, **data: Any) -> None:
        from grader.record.validation import validate_record

        object.__setattr__(self, "__dict__", dict(validate_record(type(self), data).__dict__))

    @classmethod
    def construct_trusted(cls, values: dict[str, Any]) -> Record:
        """A record of values already validated (by the validator): defaults fill what is absent."""
        record = cls.__new__(cls)
        state = {}
        for name, spec in cls.model_fields.items():
            state[name] = values[name] if name in values else spec.make_default()
        object.__setattr__(record, "__dict__", state)
        return record

    @classmethod
    def model_validate(cls, data: Any) -> Record:
        """Validate ``data`` (a mapping, as read from YAML) into this record; pydantic's ``ValidationError`` if not."""
        from grader.record.validation import validate_record

        return validate_record(cls, data)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Record:
        """A shallow copy with some fields replaced, not validated again (as pydantic's ``model_copy``)."""
        record = type(self).__new__(type(self))
        object.__setattr__(record, "__dict__", dict(self.__dict__, **(update or {})))
        return record

    @property
    def source_key(self) -> str | None:
        """The cache key of the file this record was read from; ``None`` when built otherwise, or a copy."""
        return getattr(self, "_source_key", None)

    def note_source_key(self, key: str) -> None:
        """Note that this record was read from the file whose cache key is ``key`` (no field changes)."""
        object.__setattr__(self, "_source_key", key)

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__  # the fields only: a copy (copy.copy, deepcopy) has no source key

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "__dict__", state)

    def model_dump(self, *, mode: str = "python", exclude_defaults: bool = False) -> dict[str, Any]:
        """The fields as plain data, nested records included; ``exclude_defaults`` leaves out defaults."""
        data = {}
        for name, spec in type(self).model_fields.items():
            value = self.__dict__[name]
            if exclude_defaults and not spec.required and _same(value, spec.make_default()):
                continue
            data[name] = _dump(value, exclude_defaults)
        return data

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen: build a new one with model_copy(update=...)")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self),) + tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        inside = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__name__}({inside})"


_RESERVED = frozenset(name for name in vars(Record) if not name.startswith("_"))


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # an array, say: not a default
        return False


def _dump(value: Any, exclude_defaults: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(exclude_defaults=exclude_defaults)
    if isinstance(value, list):
        return [_dump(item, exclude_defaults) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item, exclude_defaults) for key, item in value.items()}
    return value
