"""Records: classes declared the pydantic way, defined and used without importing pydantic.

Exercise specs (:mod:`grader.spec.models`) and checks (:mod:`grader.checks`)
are ``Record`` classes. A class declares its fields the pydantic way
(annotations, ``Field(...)`` with constraints and a description,
``model_validator``/``field_validator``), but defining it, loading it from
the spec cache and grading with it import nothing beyond the standard
library, so a cold ``grader grade`` never imports pydantic.

Validation is pydantic's, done by :mod:`grader.record.validation`, which
builds a pydantic model from each record class the first time a record is
validated (a spec file that changed, ``grader validate``, ``grader schema``).
Locations, messages and the JSON schema are therefore the ones pydantic gives.
:mod:`grader.record.plain` writes records as plain JSON data and rebuilds
them from it, checking each field's type, for the disk cache.

This module belongs to neither ``spec`` nor ``checks``: both declare records
with it, and it imports neither.
"""

from grader.record.fields import ConfigDict, Field, FieldSpec, field_validator, model_validator
from grader.record.model import Record

__all__ = ["ConfigDict", "Field", "FieldSpec", "Record", "field_validator", "model_validator"]
