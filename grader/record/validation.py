"""Validate records with pydantic: a pydantic model per record class, built on first use.

:mod:`grader.record` declares specs and checks without pydantic, so that
grading from the spec cache never imports it. This module is the other half,
imported only when something must be validated: it turns each record class
into a pydantic model with the same name, fields, constraints, descriptions
and validators, validates with it, and turns the result back into records.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Union, cast

import pydantic
from pydantic import BaseModel, TypeAdapter

from grader.record.fields import FieldSpec, is_record_class

__all__ = ["adapter", "model_for", "pydantic_type", "to_record", "validate_record"]


def _field(spec: FieldSpec) -> Any:
    arguments = dict(spec.options)
    if spec.default_factory is not None:
        arguments["default_factory"] = spec.default_factory
    elif not spec.required:
        arguments["default"] = spec.default
    return pydantic.Field(**arguments)


def pydantic_type(annotation: Any) -> Any:
    """``annotation`` with every record class replaced by its pydantic model and every ``Field`` by pydantic's."""
    if is_record_class(annotation):
        return model_for(annotation)
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        inner, *metadata = arguments
        converted = [_field(item) if isinstance(item, FieldSpec) else item for item in metadata]
        parameters = (pydantic_type(inner), *converted)
        return Annotated[parameters]
    if origin in (Union, types.UnionType):
        return Union[tuple(pydantic_type(item) for item in arguments)]  # noqa: UP007 -- a union built at run time
    if origin in (list, dict, tuple, set, frozenset):
        return origin[tuple(pydantic_type(item) for item in arguments)] if arguments else origin
    return annotation


def model_for(record: type[Any]) -> type[BaseModel]:
    """The pydantic model that validates ``record``: same name, docstring, fields, config, validators.

    Built once per class and kept by the class itself (``Record._pydantic_model``).
    """
    model = record.__dict__.get("_pydantic_model")  # the class's own, never a base class's
    if model is None:
        model = _build_model(record)
        record._pydantic_model = model
    return model


def _build_model(record: type[Any]) -> type[BaseModel]:
    hints = typing.get_type_hints(record, include_extras=True)
    fields: dict[str, Any] = {
        name: (pydantic_type(hints[name]), _field(spec)) for name, spec in record.model_fields.items()
    }
    validators: dict[str, Any] = {}
    for name, mark in record.__record_checks__:
        method = getattr(record, name)
        if mark == "model":
            validators[name] = pydantic.model_validator(mode="after")(_whole_check(method))
        else:
            validators[name] = pydantic.field_validator(*mark[1])(_value_check(method))
    # A record's model_config holds pydantic's config keys in a plain dict (records do not import pydantic).
    config = cast(pydantic.ConfigDict, {k: v for k, v in record.model_config.items() if k != "defer_build"})
    model = pydantic.create_model(
        record.__name__,
        __config__=config,
        __doc__=record.__dict__.get("__doc__"),
        __module__=record.__module__,
        __validators__=validators,
        **fields,
    )
    model.__record__ = record  # the class its values become (to_record)
    return model


def _whole_check(method: Any) -> Any:
    def check(self: BaseModel) -> BaseModel:
        method(to_record(self))
        return self

    return check


def _value_check(method: Any) -> Any:
    def check(cls: Any, value: Any) -> Any:
        return method(value)

    return check


def to_record(value: Any) -> Any:
    """Validated pydantic data turned back into records (lists and dicts walked)."""
    if isinstance(value, BaseModel):
        record = type(value).__record__  # type: ignore[attr-defined]
        return record.construct_trusted({name: to_record(getattr(value, name)) for name in record.model_fields})
    if isinstance(value, list):
        return [to_record(item) for item in value]
    if isinstance(value, dict):
        return {key: to_record(item) for key, item in value.items()}
    return value


def validate_record(record: type[Any], data: Any) -> Any:
    """``data`` validated as ``record``; pydantic's ``ValidationError`` (a ``ValueError``) when it is not one."""
    return to_record(model_for(record).model_validate(data))


@functools.lru_cache(maxsize=4)  # keyed by the type; one is validated whole: Spec
def adapter(annotation: Any) -> TypeAdapter[Any]:
    """A pydantic ``TypeAdapter`` for a type made of records (``Spec``), for validation and the JSON schema."""
    return TypeAdapter(pydantic_type(annotation))
