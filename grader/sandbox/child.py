"""What runs inside a learner process, after the warm parent forks it.

Order matters: confine first (capabilities, limits, Landlock, seccomp), then
import the submission, then answer calls. Everything the learner's code
could touch from here on is untrusted; the parent judges only the numbers
this module sends back. Standard library and numpy only.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from importlib.abc import Loader

from grader.sandbox.answer_batches import Answers
from grader.sandbox.arguments import preloaded_keys, requested_calls, set_given_source
from grader.sandbox.learner_errors import FloatEvents, describe_exception, forget_last_action, watch_actions
from grader.sandbox.printing import count_printing
from grader.sandbox.protocol import (
    MAX_FIELD_NAME,
    MAX_FIELDS,
    MAX_TEXT,
    MessageParser,
    encode_array,
    encode_message,
    wire_bytes,
)
from grader.sandbox.reading import Reader
from grader.sandbox.replies import ANSWER_BYTES
from grader.sandbox.scripts import ScriptFailure, run_script, unsendable_step
from grader.sandbox.signatures import describe_defaults

__all__ = ["serve"]

_MESSAGE_LIMIT = 500


def serve(config: dict[str, Any], request_fd: int, response_fd: int) -> None:
    """Confine this process, import the submission and answer calls until EOF.

    (The sandbox self-test's probe process runs ``selftest.serve_probe`` instead.)
    """
    printed = count_printing()  # from the start: what the import prints is counted too
    channel = _Channel(request_fd, response_fd)
    if config.get("confine", True):
        from grader.sandbox.confine.process import apply_layers  # (Linux only; the warm parent imported it)

        layers = apply_layers(config)
    else:  # the fallback runner's plain process, where the kernel has no layers: only resource limits
        from grader.sandbox.rlimits import limit_process

        layers = limit_process(config)
    watch_actions()
    fresh_state = _process_state()
    request: dict[str, Any] = {"op": "import", "module": config["module"], "entries": config.get("entries", [])}
    module = None
    blobs: list[bytes] = []
    while True:
        op = request.get("op")
        if op == "import":  # one process may serve several exercises of one submission: each gets a fresh module
            if module is not None:  # the first one finds the process as it was captured
                _restore_process_state(fresh_state, config["scratch"])
            _seed_randomness()
            module, failure = _import_submission(str(request["module"]), config["scratch"])
            if failure is not None:
                channel.send({"op": "ready", "ok": False, "layers": layers, "error": failure})
                return  # whatever a failed import left behind never serves another exercise
            entries = {str(name): callable(_lookup(module, name)) for name in request.get("entries", [])}
            ready = {"op": "ready", "ok": True, "layers": layers, "entries": entries}
            defaults = describe_defaults(module, [name for name, defined in entries.items() if defined])
            if defaults:  # each entry's parameters and defaults: the grader names a default that differs from the spec
                ready["defaults"] = defaults
            held = preloaded_keys()
            if held:
                ready["preloaded"] = held
            count = printed.news()
            if count is not None:  # where the import's output ends: the grader cuts the calls' output after it
                ready["printed"] = count
            channel.send(ready)
        elif op == "call_many" and module is not None:
            set_given_source(request.get("given_source"))
            answers = Answers(channel, batched=bool(request.get("batch")), printed=printed)
            floats = FloatEvents(config["scratch"])
            with floats.watching():  # once per batch: each call only starts a fresh record
                for index, (call, arguments) in enumerate(requested_calls(request, blobs)):
                    answers.add(*run_call(module, index, call, arguments, config["scratch"], floats))
            answers.flush()
        else:
            return
        message = channel.receive()
        if message is None:
            return
        request, blobs = message


def _process_state() -> dict[str, Any]:
    """What one exercise's code could change for the next in a shared process, as it is before any runs."""
    import warnings

    return {
        "errors": np.geterr(),
        "filters": list(warnings.filters),
        "path": list(sys.path),
        "recursion": sys.getrecursionlimit(),
        "cwd": os.getcwd(),
        "modules": dict(sys.modules),
    }


def _restore_process_state(state: dict[str, Any], scratch: str) -> None:
    """Undo what an earlier exercise's code set before the next exercise's file is imported.

    NumPy's error modes (``np.seterr(all="raise")``), warning filters, the
    import path, the learner's own modules (a helper file is imported afresh),
    modules a learner replaced in ``sys.modules``, the recursion limit,
    tracing hooks, pending alarms and the working folder.
    """
    import signal
    import warnings

    def forget_learner_modules() -> None:
        modules, fresh = sys.modules, state["modules"]
        for name in modules.keys() - fresh.keys():  # only what was imported since: most modules were there before
            if str(getattr(modules[name], "__file__", None) or "").startswith(scratch + os.sep):
                del modules[name]
        for name, module in fresh.items():
            if modules.get(name) is not module:
                modules[name] = module

    def filters() -> None:
        cast("list[Any]", warnings.filters)[:] = state["filters"]  # a list, though typeshed says Sequence
        warnings._filters_mutated()  # type: ignore[attr-defined]

    steps = [
        lambda: np.seterr(**state["errors"]),
        filters,
        lambda: sys.path.__setitem__(slice(None), state["path"]),
        forget_learner_modules,
        lambda: sys.setrecursionlimit(state["recursion"]),
        lambda: sys.settrace(None),
        lambda: sys.setprofile(None),
        lambda: signal.setitimer(signal.ITIMER_REAL, 0),
        lambda: os.chdir(state["cwd"]),
    ]
    for step in steps:
        try:
            step()
        except Exception:  # pragma: no cover - the learner replaced it; their own code bears the consequences
            pass


_SEED = 0


def _seed_randomness() -> None:
    """Start each exercise's code from the same random state, on every run.

    Code that draws from NumPy's or Python's global generator, or makes a
    generator without a seed (``default_rng()``), would otherwise draw new
    numbers in every learner process, and the same submission graded twice
    would be shown different numbers in its reasons. NumPy's fresh entropy
    comes from a seeded stream too. A process forked before ``numpy.random``
    was imported (a cold ``grader grade``) seeds it once the learner's code
    imports it, rather than paying for the import itself.
    """
    import random

    random.seed(_SEED)
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        _seed_numpy(numpy_random)
    elif not any(isinstance(finder, _SeedNumpyOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SeedNumpyOnImport())


def _seed_numpy(numpy_random: Any) -> None:
    import random

    try:
        numpy_random.seed(_SEED)  # the legacy global RandomState (np.random.normal and friends)
        bit_generator: Any = sys.modules.get("numpy.random.bit_generator")
        if bit_generator is not None:  # where SeedSequence() without entropy draws its own
            bit_generator.randbits = random.Random(_SEED).getrandbits
    except Exception:  # pragma: no cover - the learner replaced them: their draws, their consequences
        pass


class _SeedNumpyOnImport:
    """An import finder: ``numpy.random`` loads as usual, and is seeded right after."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "numpy.random":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = cast("Loader", _SeedingLoader(spec.loader))  # a Loader by duck typing: it delegates
        return spec


class _SeedingLoader:
    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _seed_numpy(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _Channel:
    """Blocking frames over the two pipes the warm parent handed this process."""

    def __init__(self, request_fd: int, response_fd: int) -> None:
        self._request_fd = request_fd
        self._response_fd = response_fd
        self._parser = MessageParser()
        self._reader = Reader()
        self._queue: list[tuple[dict[str, Any], list[bytes]]] = []

    def send(self, header: dict[str, Any], blobs: list[bytes] = ()) -> None:  # type: ignore[assignment]
        self.write(encode_message(header, list(blobs)))

    def write(self, data: bytes | bytearray) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._response_fd, view)
            view = view[written:]

    def receive(self) -> tuple[dict[str, Any], list[bytes]] | None:
        while not self._queue:
            chunk = self._reader.read(self._request_fd)
            if not chunk:
                return None
            self._queue.extend(self._parser.feed(chunk))
        return self._queue.pop(0)


def _lookup(module: Any, name: str) -> Any:
    try:
        return getattr(module, name, None)
    except BaseException:
        return None


def _import_submission(path: str, scratch: str) -> tuple[Any, dict[str, Any] | None]:
    """Import the learner's file as module ``submission``; describe any failure."""
    forget_last_action()
    sys.path.insert(0, scratch)
    try:
        spec = importlib.util.spec_from_file_location("submission", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included on purpose
        return None, describe_exception(exc, scratch)
    return module, None


def run_call(
    module: Any,
    index: int,
    call: dict[str, Any],
    arguments: Callable[[], tuple[list[Any], dict[str, Any]]],
    scratch: str,
    floats: FloatEvents | None = None,
) -> tuple[dict[str, Any], list[bytes]]:
    """Call one entry function and encode what it returned (with NumPy's float errors), or what it raised.

    ``floats``: a record already watching (a batch's); by default the call is watched alone.
    """
    try:
        args, kwargs = arguments()
    except Exception as exc:  # the grader sent something it should not have
        return {
            "op": "result",
            "index": index,
            "ok": False,
            "stage": "decode",
            "error": {"type": type(exc).__name__[:100], "message": str(exc)[:_MESSAGE_LIMIT], "frames": []},
        }, []
    function = _lookup(module, call["fn"])
    forget_last_action()
    if floats is None:
        floats = FloatEvents(scratch)
        watching = floats.watching()
    else:
        watching = _NOT_AGAIN
    floats.start()
    try:
        with watching:
            value = run_script(function, args[0]) if "script" in call else function(*args, **kwargs)
        events = floats.take()  # what encoding the value might log is not the learner's
    except BaseException as exc:
        error = describe_exception(exc, scratch) if not isinstance(exc, ScriptFailure) else exc.report(scratch)
        return {"op": "result", "index": index, "ok": False, "stage": "call", "error": error}, []
    try:
        kind, types, encoded, keys = encode_result(value)
        header: dict[str, Any] = {
            "op": "result",
            "index": index,
            "ok": True,
            "kind": kind,
            "types": types,
            "values": len(encoded),
        }
        if keys:
            header["keys"] = keys
        if events:
            header["float_errors"] = events
        if call.get("return_inputs"):  # the inputs as the call left them: they count toward the answer too
            after = [item for item in list(args) + list(kwargs.values()) if isinstance(item, np.ndarray)]
            if sum(map(len, encoded)) + sum(map(wire_bytes, after)) > ANSWER_BYTES:
                raise _TooLarge()
            header["inputs"] = len(after)
            encoded += [encode_array(item) for item in after]
    except BaseException as exc:
        error = {"type": type(exc).__name__[:100], "message": _safe_text(exc), "frames": []}
        if isinstance(exc, MemoryError):
            error.update(type="MemoryError", kind="memory")
        if isinstance(exc, _TooLarge):  # a fact, for the grader to phrase with its own figure
            error.update(type="ValueError", message="", kind="size")
        unsent = unsendable_step(args[0], value, encode_result) if "script" in call else None
        if unsent is not None:  # the step that kept the first value that cannot be sent, and why
            error.update(step=unsent[0], type=type(unsent[1]).__name__[:100], message=_safe_text(unsent[1]))
            if isinstance(unsent[1], _TooLarge):
                error.update(type="ValueError", message="", kind="size")
        return {"op": "result", "index": index, "ok": False, "stage": "value", "error": error}, []
    return header, encoded


_NOT_AGAIN = contextlib.nullcontext()


class _TooLarge(ValueError):
    """A returned value holds more bytes of numbers than one answer may carry (``replies.ANSWER_BYTES``)."""


def _safe_text(exc: BaseException) -> str:
    try:
        return str(exc)[:_MESSAGE_LIMIT]
    except BaseException:
        return "<no message>"


_NUMBERS = (np.ndarray, np.generic, int, float, complex)


def _plain(item: Any, budget: list[int] | None = None) -> bool:
    """Whether ``item`` is numbers only: an ndarray, a number, or nested lists of them (of Python's own types).

    Anything else (a learner's class, a list subclass, an object with ``__array__``)
    is refused before numpy could call its methods: a "lying" object's
    ``__len__``/``__getitem__`` could otherwise run, or loop, during conversion.
    """
    if isinstance(item, _NUMBERS):
        return True
    budget = budget if budget is not None else [1 << 22]
    if type(item) not in (list, tuple):
        return False
    budget[0] -= len(item)
    return budget[0] >= 0 and all(_plain(element, budget) for element in item)


def encode_result(value: Any) -> tuple[str, list[str], list[bytes], list[str]]:
    """Turn a returned value into array payloads (and a mapping's field names); refuse anything but numbers and
    strings, or more than one answer holds.

    A result is one item, a tuple of items, or a ``dict`` from short string keys to items; an item is numbers (an
    array, a number, nested lists of them) or a ``str``, which travels as an array of its code points.
    """
    if type(value) is np.ndarray and value.dtype.kind in "biufc" and wire_bytes(value) <= ANSWER_BYTES:
        return "single", ["ndarray"], [encode_array(value)], []  # most answers: one plain array of numbers
    keys: list[str] = []
    if type(value) is dict:
        if len(value) > MAX_FIELDS:
            raise ValueError(f"returned a dict of more than {MAX_FIELDS} fields")
        if not all(type(key) is str and 0 < len(key) <= MAX_FIELD_NAME for key in value):
            raise TypeError("returned a dict whose keys are not all short strings")
        kind, keys, items = "mapping", list(value), list(value.values())
    else:
        kind = "tuple" if isinstance(value, tuple) else "single"
        items = list(value) if kind == "tuple" else [value]
    if len(items) > 64:
        raise ValueError("returned a tuple of more than 64 items")
    types = [type(item).__name__[:80] for item in items]
    encoded: list[bytes] = []
    room = ANSWER_BYTES
    for item, name in zip(items, types, strict=True):
        if type(item) is str:
            if len(item) > MAX_TEXT:
                raise _TooLarge()
            array = np.frombuffer(item.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        elif not _plain(item):  # an object of the learner's own: never let numpy run its methods
            raise TypeError(f"returned a value that is not an array of numbers ({name})")
        elif isinstance(item, np.ndarray) and wire_bytes(item) > room:  # refuse before copying it
            raise _TooLarge()
        else:
            # A plain ndarray is encoded as it is (encoding copies its bytes); anything else becomes one first.
            array = item if type(item) is np.ndarray else np.array(item, copy=True, subok=False)
        if array.dtype.hasobject or array.dtype.kind not in "biufc":
            raise TypeError(f"returned a value that is not an array of numbers ({name}, dtype {array.dtype})")
        room -= wire_bytes(array)
        if room < 0:
            raise _TooLarge()
        encoded.append(encode_array(array))
    return kind, types, encoded, keys
