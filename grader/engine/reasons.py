"""Sentences for learners, composed from the structured parts of a result.

One place writes them so every check speaks the same way: the property,
the smallest input that breaks it, what came back, what was expected, the
known mistake it matches, and a hint. No timestamps, no paths, no blame.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from grader.sandbox.outcomes import CallOutcome, StartOutcome, Stop, hit_cpu_limit

if TYPE_CHECKING:
    from grader.checks.base import Finding

__all__ = [
    "describe_error",
    "describe_start_failure",
    "describe_stop",
    "failure_reason",
    "outcome_detail",
    "passed_reason",
    "ragged",
    "returned_value",
]


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    return text if text.endswith((".", "?")) else text + "."


def passed_reason(description: str, verified: str) -> str:
    """``softmax returns ..., verified on 40 inputs, ...``"""
    return _sentence(f"{description}, verified {verified}")


def failure_reason(
    description: str,
    call: str | None,
    finding: Finding,
    *,
    diagnosis: str | None,
    hint: str,
    more: int,
    reveal: bool,
    cause: str = "",
) -> str:
    """The whole story of a failed check, or only the property when the spec hides the rest.

    ``cause``: what the facts of the failure show beyond expected and got
    (``engine.failure_modes``: a dtype that lost range, an exception's own
    suggestion). ``hint``: the check's hint for this failure's mode, or
    empty. ``diagnosis``: a known mistake the failure was shown to match;
    when there is none, nothing claims one.
    """
    if not reveal:
        return _sentence(f"{description}: this did not hold on a hidden input")
    parts = [_sentence(f"{description}, but not for {call}" if call else description + ", but not for your answer")]
    parts.append(_sentence(f"Expected {finding.expected}; got {finding.got}"))
    if finding.note:
        parts.append(_sentence(finding.note))
    if cause:
        parts.append(_sentence(cause))
    if diagnosis:
        parts.append(_sentence(f"This matches a known mistake: {diagnosis}"))
    if hint and not diagnosis:
        parts.append(_sentence(f"Hint: {hint}"))
    if more:
        parts.append(f"(and {more} more failing input{'s' if more > 1 else ''})")
    return " ".join(parts)


def describe_error(outcome: CallOutcome, function: str) -> str:
    """What went wrong in a call that returned no value: exception, refusal, limit, crash, flood."""
    if outcome.status == "raised" and outcome.error:
        refused = refusal(outcome.error)
        if refused:
            return f"{function} {refused}: it raised {_exception(outcome.error)}"
        return f"{function} raised {_exception(outcome.error)}"
    if outcome.status == "bad_value" and outcome.error:
        if too_large := size_limit(outcome.error):
            return f"{function} {too_large}"
        if refusal(outcome.error) and outcome.error.get("type") == "MemoryError":
            return f"{function} returned a value too large to hand back: it {refusal(outcome.error)} while copying it"
        return f"{function} {returned_value(outcome.error)}"
    if outcome.status == "protocol":
        return f"{function} {PROTOCOL}" + (f" ({outcome.detail})" if outcome.detail else "")
    detail = outcome_detail(outcome)
    if outcome.status in ("crashed", "output_limit") and detail:
        return f"{function} {detail}"
    return f"{function} did not answer: {detail}"


_NOT_NUMBERS = re.compile(r"^returned a value that is not an array of numbers \((\w+)(?:, dtype ([^)]+))?\)$")
_RAGGED = "inhomogeneous shape"


def ragged(error: Mapping[str, Any] | None) -> bool:
    """Whether a returned value could not be read because NumPy found items of different shapes in it."""
    return bool(error) and error.get("type") == "ValueError" and _RAGGED in str(error.get("message", ""))  # type: ignore[union-attr]


def returned_value(error: Mapping[str, Any]) -> str:
    """What a call returned that is not numbers, as what the learner's code did (``returned None, ...``).

    The learner process reports the Python type of what came back and, when
    NumPy could not make numbers of it, NumPy's own message; both are put in
    the learner's terms: an exception object returned rather than raised, a
    list whose items differ in shape, an array of Python objects.
    """
    message = str(error.get("message", ""))
    if ragged(error):
        return (
            "returned a list or tuple whose items are not all numbers of one shape (for example an array "
            "next to single numbers), so it does not make one array of numbers"
        )
    found = _NOT_NUMBERS.match(message)
    if found is None:
        if message.startswith("returned"):
            return message
        return f"returned a value that could not be read as numbers ({message})"
    name, dtype = found.group(1), found.group(2)
    if name == "NoneType":
        return "returned None, not an array of numbers"
    if _is_exception(name):
        return f"returned a {name} object instead of raising it (raise {name}(...) stops the call with that error)"
    kind = "NumPy array" if name == "ndarray" else name
    if dtype == "object":
        return f"returned {_article(kind)} {kind} of Python objects (dtype object), not an array of numbers"
    if dtype:
        return f"returned {_article(kind)} {kind} of dtype {dtype}, not an array of numbers"
    if name in ("list", "tuple"):
        return f"returned {_article(name)} {name} holding something other than numbers"
    return f"returned {_article(name)} {name} object, not an array of numbers"


def _is_exception(name: str) -> bool:
    """Whether ``name`` is one of Python's exception classes (a learner's own class is not assumed to be one)."""
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def describe_start_failure(start: StartOutcome) -> str:
    """Why the submission could not be imported, in the learner's terms."""
    if start.status == "raised" and start.error:
        error = start.error
        if error.get("type") == "SystemExit":
            return f"your file stopped Python while it was being imported (SystemExit {error.get('message', '')})"
        if error.get("type") in ("SyntaxError", "IndentationError", "TabError") and error.get("line"):
            text = f": {error['text']}" if error.get("text") else ""
            where = f" {error['file']}" if isinstance(error.get("file"), str) and error["file"] else ""
            return f"your file{where} has a {error['type']} at line {error['line']} ({error.get('message', '')}){text}"
        refused = refusal(error)
        if refused:
            return f"while being imported, your file {refused}: it raised {_exception(error)}"
        return f"importing your file raised {_exception(error)}"
    detail = outcome_detail(start)
    if start.status in ("crashed", "output_limit") and detail:
        return f"while being imported, your file {detail}"
    if start.status == "protocol" and start.error and (too_large := size_limit(start.error)):
        return f"your file {too_large}"
    if start.status == "protocol":
        return f"while being imported, your file {PROTOCOL}"
    return f"your file could not be imported: {detail}"


def _exception(error: dict[str, Any]) -> str:
    text = f"{error.get('type', 'Exception')}"
    if error.get("message") and error.get("kind") != "import":  # an import refusal's message is a site-packages path
        text += f": {str(error['message']).strip()}"
    frames = error.get("frames") or []
    if frames:
        last = frames[-1]
        where = f"{last.get('file')} line {last.get('line')}"
        if last.get("text"):
            where += f": {last['text']}"
        text += f" ({where})"
    return text


# -- What the sandbox did, in one place ---------------------------------------
# The learner process reports an exception's type, message, errno and the kind
# of action the sandbox refused (``error["kind"]``, from an audit hook in the
# child); the runner reports how a process ended (signal, exit status, CPU time
# used). These functions turn both into the phrases learners read, so a
# timeout always names its limit and a refusal always says what was refused.

IMPORTABLE = "(only the standard library and numpy are)"
REFUSALS = {
    "process": "tried to start a process (not allowed)",
    "network": "tried to use the network (network access is not allowed)",
    "file": "tried to reach a file outside its own folder (file access denied)",
    "import": f"tried to import a module that is not available here {IMPORTABLE}",
    "signal": "tried to signal another process (not allowed)",
    "limits": "tried to raise its own resource limits (not allowed)",
    "forbidden": "tried an operation the sandbox does not allow (permission denied)",
}
PROTOCOL = "returned an unreadable or non-numeric value"


def size_text(size: int) -> str:
    """``536870912`` -> ``512 MiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def refusal(error: dict[str, Any]) -> str | None:
    """The phrase for an exception that reports a sandbox refusal or a memory limit, else ``None``."""
    kind = error.get("kind")
    if kind == "memory" or error.get("type") == "MemoryError":
        limit = error.get("limit")
        return f"ran out of memory (limit {size_text(limit)})" if isinstance(limit, int) else "ran out of memory"
    if kind == "import" and isinstance(error.get("module"), str):
        return f"tried to import a module that is not available here: {error['module']} {IMPORTABLE}"
    return REFUSALS.get(kind) if isinstance(kind, str) else None


SIZE_SCOPES = {
    "answer": "in one answer",
    "exercise": "in the answers of one exercise",
    "submission": "in the answers of one submission",
}


def size_limit(error: dict[str, Any]) -> str | None:
    """``returned more than 1 MiB in one answer (limit 1 MiB)``, for a reply refused for its size, else ``None``."""
    scope, limit = SIZE_SCOPES.get(error.get("scope")), error.get("limit")  # type: ignore[arg-type]
    if error.get("kind") != "size" or scope is None or type(limit) is not int:
        return None
    return f"returned more than {size_text(limit)} {scope} (limit {size_text(limit)})"


def timeout_detail(seconds: float, cpu_used: float | None, during: str = "") -> str:
    """``no answer within 2 s (wall-clock limit), busy computing all along``."""
    text = f"no answer within {seconds:g} s (wall-clock limit)"
    if cpu_used is not None and seconds > 0:
        share = cpu_used / seconds
        if share >= 0.2:
            text += ", busy computing all along"
        elif share < 0.05:
            text += ", waiting rather than computing (sleeping or blocked)"
    return text + (f" {during}" if during else "")


def cpu_limit_detail(seconds: float, during: str = "", *, ignored_warning: bool = False) -> str:
    """``stopped after 20 s of CPU time (limit 20 s)``."""
    text = f"stopped after {seconds:g} s of CPU time (limit {seconds:g} s"
    text += ", after ignoring the warning signal SIGXCPU)" if ignored_warning else ")"
    return text + (f" {during}" if during else "")


def output_limit_detail(cap: int) -> str:
    """``printed more than 1 MiB; stopped``."""
    return f"printed more than {size_text(cap)}; stopped"


_SIGNALS = {
    "SIGSEGV": "crashed (SIGSEGV: an invalid memory access, for example through ctypes or runaway recursion)",
    "SIGBUS": "crashed (SIGBUS: an invalid memory access)",
    "SIGABRT": "crashed (SIGABRT: the process aborted itself)",
    "SIGFPE": "crashed (SIGFPE: an arithmetic fault)",
    "SIGILL": "crashed (SIGILL: an illegal instruction)",
}


def crash_detail(end: Mapping[str, Any], *, cpu_seconds: float, file_bytes: int, during: str = "") -> str:
    """How a learner process ended by itself: a signal, a limit, or an exit before answering."""
    suffix = f" {during}" if during else ""
    if "signal" in end:
        name = str(end.get("signal_name") or f"signal {end['signal']}")
        soft = float(int(-(-cpu_seconds // 1)))  # the kernel's limit is whole seconds
        if name == "SIGXCPU":
            return cpu_limit_detail(soft, during)
        if hit_cpu_limit(end, cpu_seconds):
            return cpu_limit_detail(soft + 1, during, ignored_warning=True)
        if name == "SIGXFSZ":
            return f"wrote a file larger than the limit ({size_text(file_bytes)}); stopped{suffix}"
        if name == "SIGKILL":
            return f"was killed (SIGKILL), most likely for running out of memory{suffix}"
        return _SIGNALS.get(name, f"crashed ({name})") + suffix
    return f"exited with status {end.get('exit')} before returning a value{suffix}"


_PHASES = {"call": "", "import": "while importing your file", "self-test": "during the self-test"}


def describe_stop(stop: Stop) -> str:
    """Why a learner process stopped, in the learner's terms (``no answer within 2 s (wall-clock limit)``)."""
    during = _PHASES[stop.phase]
    if stop.kind == "timeout":
        if stop.budget:
            return "the exercise's time budget ran out before this call answered"
        return timeout_detail(stop.seconds, stop.cpu_used, during)
    if stop.kind == "output_limit":
        return output_limit_detail(stop.output_cap)
    if stop.kind == "closed":
        return "closed its channel to the grader" + (f" {during}" if during else "")
    return crash_detail(stop.end, cpu_seconds=stop.cpu_seconds, file_bytes=stop.file_bytes, during=during)


def outcome_detail(outcome: CallOutcome | StartOutcome) -> str:
    """The short phrase for a call or import that gave no value: why its process stopped, or the fixed note."""
    return describe_stop(outcome.stop) if outcome.stop is not None else outcome.detail
