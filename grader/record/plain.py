"""Records as plain JSON data and back, checked against the fields' declared types on the way in.

The disk cache (:mod:`grader.cache`) keeps validated specs as JSON, never as
pickles, so reading an entry can build data only: no class is imported, no
function is called that the entry names. :func:`to_plain` writes a record as
a JSON object of its fields plus ``__record__``, the class's name (field
names never start with ``_``); :func:`from_plain` rebuilds records from that
data guided by a type annotation alone: a name is accepted only where the
annotation allows a record class of that name, and every field's value must
have its declared type (``str``, ``int``, ``float``, ``bool``, ``None``, a
``Literal``'s values, lists and dicts of those, other records). Anything else
raises :class:`NotPlain`, and the caller drops the entry. Values are not
checked against constraints (``gt``, ``pattern``): the grader validated them
before it stored them, and a type check is what keeps a damaged entry from
crashing the grader.

Standard library only; pydantic is never imported here.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Annotated, Any, Literal, Union

from grader.record.model import Record

__all__ = ["NotPlain", "from_plain", "to_plain"]

_TAG = "__record__"
_SCALARS = (str, int, float, bool, type(None))


class NotPlain(ValueError):
    """A value that is not plain JSON data of the expected type (what went wrong, and where)."""


def to_plain(value: Any) -> Any:
    """``value`` (records, lists, dicts with string keys, JSON scalars) as JSON data; :class:`NotPlain` otherwise."""
    if isinstance(value, Record):
        data = {_TAG: type(value).__name__}
        for name in type(value).model_fields:
            data[name] = to_plain(value.__dict__[name])
        return data
    if type(value) in _SCALARS:
        return value
    if type(value) is list:
        return [to_plain(item) for item in value]
    if type(value) is dict and all(type(key) is str for key in value):
        return {key: to_plain(item) for key, item in value.items()}
    raise NotPlain(f"a {type(value).__name__} is not plain data")


def from_plain(data: Any, annotation: Any, where: str = "") -> Any:
    """``data`` (as ``json.loads`` gives it) rebuilt as a value of ``annotation``; :class:`NotPlain` if not one."""
    if annotation is Any:
        return _any(data, where)
    if isinstance(annotation, type):
        if issubclass(annotation, Record):
            return _record(data, (annotation,), where)
        if annotation in _SCALARS:
            if type(data) is not annotation:
                raise NotPlain(f"{where or 'value'}: a {type(data).__name__}, not a {annotation.__name__}")
            return data
        if annotation in (list, dict):
            return from_plain(data, annotation[Any] if annotation is list else annotation[str, Any], where)
    if annotation is None:
        return from_plain(data, type(None), where)
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return from_plain(data, arguments[0], where)
    if origin is Literal:
        if not any(type(data) is type(choice) and data == choice for choice in arguments):
            raise NotPlain(f"{where or 'value'}: {data!r} is not one of {list(arguments)!r}")
        return data
    if origin in (Union, types.UnionType):
        return _union(data, arguments, where)
    if origin is list:
        if type(data) is not list:
            raise NotPlain(f"{where or 'value'}: a {type(data).__name__}, not a list")
        (item,) = arguments
        return [from_plain(value, item, f"{where}[{i}]") for i, value in enumerate(data)]
    if origin is dict:
        if type(data) is not dict:
            raise NotPlain(f"{where or 'value'}: a {type(data).__name__}, not a mapping")
        key_type, value_type = arguments
        return {
            from_plain(key, key_type, f"{where}.{key}"): from_plain(value, value_type, f"{where}.{key}")
            for key, value in data.items()
        }
    raise NotPlain(f"{where or 'value'}: the type {annotation!r} is not kept as plain data")


def _any(data: Any, where: str) -> Any:
    """Plain JSON data as it is (``json.loads`` gives nothing else; a caller's own data may)."""
    if type(data) in _SCALARS:
        return data
    if type(data) is list:
        return [_any(item, f"{where}[{i}]") for i, item in enumerate(data)]
    if type(data) is dict and all(type(key) is str for key in data):
        return {key: _any(item, f"{where}.{key}") for key, item in data.items()}
    raise NotPlain(f"{where or 'value'}: a {type(data).__name__} is not plain data")


def _union(data: Any, members: tuple[Any, ...], where: str) -> Any:
    records = tuple(member for member in members if isinstance(member, type) and issubclass(member, Record))
    if records and type(data) is dict and _TAG in data:
        return _record(data, records, where)
    problems = []
    for member in members:
        if member in records:
            continue
        try:
            return from_plain(data, member, where)
        except NotPlain as problem:
            problems.append(str(problem))
    raise NotPlain(problems[0] if len(problems) == 1 else f"{where or 'value'}: {data!r} fits none of {members!r}")


def _record(data: Any, allowed: tuple[type[Record], ...], where: str) -> Record:
    if type(data) is not dict:
        raise NotPlain(f"{where or 'value'}: a {type(data).__name__}, not a record")
    name = data.get(_TAG)
    chosen = next((record for record in allowed if record.__name__ == name), None)
    if chosen is None:
        raise NotPlain(f"{where or 'value'}: {name!r} is none of {[record.__name__ for record in allowed]}")
    fields = chosen.model_fields
    if data.keys() - {_TAG} != fields.keys():
        different = sorted((data.keys() - {_TAG}) ^ fields.keys())
        raise NotPlain(f"{where or 'value'}: {name} has other fields than its class ({', '.join(different)})")
    hints = field_types(chosen)
    values = {field: from_plain(data[field], hints[field], f"{where}.{field}".lstrip(".")) for field in fields}
    return chosen.construct_trusted(values)


def field_types(record: type[Record]) -> dict[str, Any]:
    """The evaluated annotation of each field of ``record``, worked out once and kept by the class itself.

    Only the class's own annotations are evaluated; a base class's come from
    its own entry, so a family of checks evaluates ``Check``'s fields once.
    """
    kept = record.__dict__.get("_plain_field_types")
    if kept is not None:
        return typing.cast(dict[str, Any], kept)
    found: dict[str, Any] = {}
    for base in reversed(record.__mro__[1:]):
        if isinstance(base, type) and issubclass(base, Record) and base is not Record:
            found.update(field_types(base))
    namespace = vars(sys.modules[record.__module__])
    for name, annotation in record.__dict__.get("__annotations__", {}).items():
        if name in record.model_fields:
            found[name] = eval(annotation, namespace, dict(vars(record))) if isinstance(annotation, str) else annotation
    record._plain_field_types = found
    return found
