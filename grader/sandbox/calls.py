"""Calls to a learner's entry functions, encoded for the wire: what the grader asks a learner process.

A call goes as JSON (the function's name, each argument as a reference to an
array payload, an inline number, or the name of a function of the exercise's
given file, whose source travels with the request that needs it) plus the
array payloads themselves (``protocol``).

A class entry's case is a script (``scripts.Script``): it goes as one call
whose ``script`` lists the steps, their arguments encoded the same way.

A ``CallBatch`` is one such request: its calls, their payloads, and a key
that is a digest of both. Two batches with the same key ask for exactly the
same thing, so whatever is matched or remembered about a batch (the answers
owed to calls sent along with an import, a request's encoded bytes) is
found by that key, never by which list object happens to carry the calls.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np
from msgspec import Struct, field

from grader.sandbox.protocol import encode_array
from grader.sandbox.scripts import Script, encode_script

__all__ = ["CallBatch", "PlannedCall", "TrustedFunction", "encode_calls", "shift_payloads"]


class TrustedFunction(Struct, frozen=True):
    """A function of the exercise's given file handed to a learner's higher-order entry.

    ``bound`` are keyword arguments fixed in advance (``linear`` with its
    matrix ``A``): the learner's code receives ``partial(function, **bound)``,
    built inside the process from the given file's source (``CallBatch.given``),
    so no callable crosses the boundary.
    """

    name: str
    bound: tuple[tuple[str, np.ndarray], ...] = ()

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The bound arrays, in order."""
        return tuple(array for _, array in self.bound)


class PlannedCall(Protocol):
    """What the encoder needs of a call: the entry's name, its named arguments, whether inputs come back."""

    @property
    def function(self) -> str: ...
    @property
    def args(self) -> Mapping[str, Any]: ...
    @property
    def return_inputs(self) -> bool: ...


class CallBatch(Struct, frozen=True, eq=False):
    """One request of calls: the encoded calls, their array payloads, and a key naming both by value.

    Built by :meth:`of` (which computes the key) or by :func:`encode_calls`.
    The key is the same for any two batches asking for the same calls with
    the same payloads, whichever objects carry them.
    """

    calls: list[dict[str, Any]]
    blobs: list[bytes]
    key: str = field(default="")
    given: str = ""  # the source of the exercise's given functions, for calls that hand one over

    @classmethod
    def of(cls, calls: list[dict[str, Any]], blobs: Iterable[bytes] = (), given: str = "") -> CallBatch:
        """The batch of ``calls`` with payloads ``blobs`` (and ``given`` source), its key computed from all."""
        blobs = list(blobs)
        key = batch_key(calls, blobs)
        return cls(calls, blobs, _with_source(key, given), given)

    def with_given(self, given: str) -> CallBatch:
        """The same calls carrying the given functions' source (sent with the request, never preloaded)."""
        if not given or given == self.given:
            return self
        if self.given or not self.key:  # its key holds another source (or none was made): start from the calls
            return CallBatch.of(self.calls, self.blobs, given)
        # Without a source the key is the calls' own digest: encoding every call again would give the same one.
        return CallBatch(self.calls, self.blobs, _with_source(self.key, given), given)

    def __len__(self) -> int:
        return len(self.calls)

    def only(self, indices: Iterable[int]) -> CallBatch:
        """The calls at ``indices`` (in that order), with the same payloads: asked again one by one."""
        return CallBatch.of([self.calls[i] for i in indices], self.blobs, self.given)


def _with_source(key: str, given: str) -> str:
    """A batch's key once it also carries ``given`` (the key itself when it carries no source)."""
    return hashlib.blake2b(f"{key}\0{given}".encode(), digest_size=16).hexdigest() if given else key


def batch_key(calls: list[dict[str, Any]], blobs: list[bytes]) -> str:
    """A digest of encoded calls and their payloads (each payload's length first, so none runs into the next)."""
    digest = hashlib.blake2b(json.dumps(calls, sort_keys=True, separators=(",", ":")).encode(), digest_size=16)
    for blob in blobs:
        digest.update(len(blob).to_bytes(8, "little"))
        digest.update(blob)
    return digest.hexdigest()


def encode_calls(calls: Iterable[PlannedCall], signatures: Mapping[str, list[str]] | None = None) -> CallBatch:
    """Calls as JSON plus array payloads: arrays by index, numbers inline, functions by name.

    Arguments go by position, in signature order, up to the first argument a
    case leaves out; the ones after that gap go by keyword, so leaving out a
    middle default never shifts the others.
    """
    blobs: list[bytes] = []
    encoded = []

    def value(item: Any) -> dict[str, Any]:
        if isinstance(item, np.ndarray):
            blobs.append(encode_array(item))
            return {"t": "array", "i": len(blobs) - 1}
        if isinstance(item, TrustedFunction):
            bound = {}
            for name, array in item.bound:
                blobs.append(encode_array(array))
                bound[name] = len(blobs) - 1
            return {"t": "callable", "name": item.name, "bound": bound}
        if isinstance(item, np.generic):
            return {"t": "value", "v": item.item()}
        return {"t": "value", "v": item}

    for call in calls:
        script = call.args.get("script")
        if isinstance(script, Script):  # a class entry's case: the whole script is one call
            encoded.append(
                {"fn": call.function, "args": [], "script": encode_script(script, value), "return_inputs": False}
            )
            continue
        order = (signatures or {}).get(call.function) or list(call.args)
        positional: list[dict[str, Any]] = []
        keywords: dict[str, dict[str, Any]] = {}
        gap = False
        for name in order:
            if name not in call.args:
                gap = True
            elif gap:
                keywords[name] = value(call.args[name])
            else:
                positional.append(value(call.args[name]))
        for name in call.args:
            if name not in order:
                keywords[name] = value(call.args[name])
        item: dict[str, Any] = {"fn": call.function, "args": positional, "return_inputs": call.return_inputs}
        if keywords:
            item["kwargs"] = keywords
        encoded.append(item)
    return CallBatch.of(encoded, blobs)


def shift_payloads(item: dict[str, Any], offset: int) -> dict[str, Any]:
    """A call's encoding with its payload indices moved by ``offset`` (to join calls into one batch)."""
    if not offset:
        return item

    def move(spec: dict[str, Any]) -> dict[str, Any]:
        if spec["t"] == "array":
            return {"t": "array", "i": spec["i"] + offset}
        if spec["t"] == "callable":
            return dict(spec, bound={name: i + offset for name, i in spec["bound"].items()})
        return spec

    moved = dict(item, args=[move(spec) for spec in item["args"]])
    if "script" in item:
        moved["script"] = [dict(step, args={k: move(v) for k, v in step["args"].items()}) for step in item["script"]]
    if "kwargs" in item:
        moved["kwargs"] = {name: move(spec) for name, spec in item["kwargs"].items()}
    return moved
