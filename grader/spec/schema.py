"""``grader schema``: the JSON Schema (draft 2020-12) of exercise specs, for editors and standard validators.

pydantic writes the schema from the spec records; this module makes it one a
standard validator reports precisely. pydantic writes a tagged union (``kind:``
of a spec, ``property:`` of a check, ``type:`` of a question) as a ``oneOf``
with an OpenAPI ``discriminator``, a keyword JSON Schema validators ignore: a
typo in one check then fails every branch, and the error is that the whole
document matches none of them. Here each union becomes an enum of its tags
(an unknown tag is reported at its key, with the allowed ones) and one
``if: {tag: X} then: {$ref: X}`` per branch, so an object is checked against
its own branch alone and an unknown key is reported at that object. A union
told apart by which key is present (a case set's ``examples:``, ``random:``,
``matrices:``, ``scripts:``) gets the same shape, keyed by ``required``, and
one told apart by the value's JSON type (a check's ``hints:`` list or
mapping, an argument's draw or list of values, a known-wrong's ``raises:``
or null) is keyed by ``type``. No ``anyOf`` or ``oneOf`` is left over
objects, so the error a validator reports does not rest on how it guesses
which branch the author meant.

Every property carries a description: the one its record field declares, or,
for a union's tag, the docstring of the record class the tag selects.
"""

from __future__ import annotations

from typing import Any

from grader import __version__

__all__ = ["SCHEMA_DIALECT", "schema_id", "spec_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_id() -> str:
    """The schema's ``$id``: a name for this version's schema (a URN, since the grader publishes it nowhere)."""
    return f"urn:grader:exercise-spec:{__version__}"


def spec_schema() -> dict[str, Any]:
    """The JSON Schema of one spec file: ``$schema``, ``$id``, each tagged union as if/then, described properties.

    Keys are those pydantic gives the spec records, so an editor completes
    exactly the keys the loader accepts.
    """
    from grader.record.validation import adapter
    from grader.spec.models import Spec

    generated = adapter(Spec).json_schema()
    definitions: dict[str, Any] = generated.pop("$defs", {})
    for name, definition in definitions.items():
        definitions[name] = _rewrite(definition, definitions)
    body = _rewrite(generated, definitions)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": schema_id(),
        "title": "grader exercise spec",
        "description": "One exercise spec (kind implementation, witness or quiz) or an assignment (kind assignment).",
        **body,
        "$defs": definitions,
    }


def _rewrite(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every discriminated ``oneOf`` below it turned into if/then branches (depth first)."""
    if isinstance(node, list):
        return [_rewrite(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {key: _rewrite(value, definitions) for key, value in node.items()}
    if "discriminator" in rewritten and "oneOf" in rewritten:
        return _tagged_union(rewritten, definitions)
    keys = _branch_keys(rewritten, definitions)
    if keys is not None:
        return _keyed_union(rewritten, keys, definitions)
    types = _branch_types(rewritten, definitions)
    if types is not None:
        return _typed_union(rewritten, types)
    return rewritten


def _tagged_union(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A ``oneOf`` + ``discriminator`` as: an object whose tag is one of the known tags, then its branch's schema.

    Tags that select the same record (``implementation`` and ``witness``) share
    one branch. The tag's description names every tag with what it selects.
    """
    discriminator = node["discriminator"]
    tag: str = discriminator["propertyName"]
    tags_of: dict[str, list[str]] = {}  # reference -> its tags, in the order pydantic lists them
    for value, reference in discriminator["mapping"].items():
        tags_of.setdefault(reference, []).append(value)
    branches = []
    for reference, values in tags_of.items():
        match = {"const": values[0]} if len(values) == 1 else {"enum": values}
        branches.append({"if": {"properties": {tag: match}, "required": [tag]}, "then": {"$ref": reference}})
        _describe_tag(definitions[reference.rsplit("/", 1)[-1]], tag)
    known = [value for values in tags_of.values() for value in values]
    union: dict[str, Any] = {key: value for key, value in node.items() if key not in ("discriminator", "oneOf")}
    union.update(
        {
            "type": "object",
            "required": [tag],
            "properties": {tag: {"enum": known, "description": f"which of these it is: {', '.join(known)}"}},
            "allOf": branches,
        }
    )
    return union


def _branch_keys(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, str] | None:
    """For an ``anyOf`` of records each told apart by the one key it requires (a case set's ``examples:``,
    ``random:``, ``matrices:``), that key of each branch's reference; ``None`` for any other node."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) < 2 or not all(set(b) == {"$ref"} for b in branches):
        return None
    keys: dict[str, str] = {}
    for branch in branches:
        definition = definitions.get(branch["$ref"].rsplit("/", 1)[-1], {})
        required = definition.get("required", [])
        if definition.get("additionalProperties") is not False or len(required) != 1 or required[0] in keys:
            return None
        keys[required[0]] = branch["$ref"]
    return keys


def _keyed_union(node: dict[str, Any], keys: dict[str, str], definitions: dict[str, Any]) -> dict[str, Any]:
    """An ``anyOf`` of records told apart by a key as: the keys any branch allows, one branch's key present,
    then that branch's schema, so that a misspelt key is reported as unexpected at its object."""
    allowed: dict[str, Any] = {}
    for reference in keys.values():
        for name, prop in definitions[reference.rsplit("/", 1)[-1]].get("properties", {}).items():
            allowed.setdefault(name, {"description": prop.get("description", name)})
    union: dict[str, Any] = {key: value for key, value in node.items() if key != "anyOf"}
    union.update(
        {
            "type": "object",
            "properties": allowed,
            "additionalProperties": False,
            "anyOf": [{"required": [key]} for key in keys],
            "allOf": [{"if": {"required": [key]}, "then": {"$ref": reference}} for key, reference in keys.items()],
        }
    )
    return union


def _branch_types(node: dict[str, Any], definitions: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """For an ``anyOf`` with a record or mapping among its branches, each branch told apart by its JSON type (a
    check's ``hints:`` list or mapping, an ``args:`` draw or list, a ``raises:`` record or null), each branch's
    type with the branch; ``None`` for any other node."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) < 2 or "type" in node or "allOf" in node:
        return None
    typed: list[tuple[str, dict[str, Any]]] = []
    for branch in branches:
        target = definitions.get(branch["$ref"].rsplit("/", 1)[-1], {}) if "$ref" in branch else branch
        kind = target.get("type")
        if not isinstance(kind, str):
            return None
        typed.append((kind, branch))
    kinds = [kind for kind, _branch in typed]
    # integer is a kind of number: a value of both would have to match both branches, not either
    if len(set(kinds)) != len(kinds) or "object" not in kinds or {"integer", "number"} <= set(kinds):
        return None
    return typed


def _typed_union(node: dict[str, Any], types: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """An ``anyOf`` told apart by JSON type as: one of those types, then the branch of the value's type, so that
    a misspelt key of the record branch is reported at its object, and a value of no branch's type at the union."""
    union: dict[str, Any] = {key: value for key, value in node.items() if key != "anyOf"}
    union["type"] = [kind for kind, _branch in types]
    union["allOf"] = [{"if": {"type": kind}, "then": branch} for kind, branch in types if branch != {"type": kind}]
    return union


def _describe_tag(definition: dict[str, Any], tag: str) -> None:
    """Give a branch's tag property the record's own description (its class docstring), unless it has one."""
    prop = definition.get("properties", {}).get(tag)
    if prop is None or "description" in prop:
        return
    summary = " ".join(definition.get("description", "").split())
    prop["description"] = summary or f"the {tag} of this {definition.get('title', 'object')}"
