"""Sentences for learners, composed from the structured parts of a result.

One place writes them so every check speaks the same way: the property,
the smallest input that breaks it, what came back, what was expected, the
known mistake it matches, and a hint. No timestamps, no paths, no blame.
"""

from __future__ import annotations

from typing import Any

from grader.checks.base import Finding
from grader.sandbox.outcomes import CallOutcome, StartOutcome

__all__ = ["describe_error", "describe_start_failure", "failure_reason", "passed_reason"]


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
) -> str:
    """The whole story of a failed check, or only the property when the spec hides the rest."""
    if not reveal:
        return _sentence(f"{description}: this did not hold on a hidden input")
    parts = [_sentence(f"{description}, but not for {call}" if call else description + ", but not for your answer")]
    parts.append(_sentence(f"Expected {finding.expected}; got {finding.got}"))
    if finding.note:
        parts.append(_sentence(finding.note))
    if diagnosis:
        parts.append(_sentence(f"This matches a known mistake: {diagnosis}"))
    if hint and not diagnosis:
        parts.append(_sentence(f"Hint: {hint}"))
    if more:
        parts.append(f"(and {more} more failing input{'s' if more > 1 else ''})")
    return " ".join(parts)


def describe_error(outcome: CallOutcome, function: str) -> str:
    """What went wrong in a call that returned no value: exception, timeout, crash, flood."""
    if outcome.status == "raised" and outcome.error:
        return f"{function} raised {_exception(outcome.error)}"
    if outcome.status == "bad_value" and outcome.error:
        message = outcome.error.get("message", "")
        return f"{function} {message}" if message.startswith("returned") else f"{function} returned a value the grader cannot read ({message})"
    return f"{function} did not answer: {outcome.detail}"


def describe_start_failure(start: StartOutcome) -> str:
    """Why the submission could not be imported, in the learner's terms."""
    if start.status == "raised" and start.error:
        error = start.error
        if error.get("type") == "SystemExit":
            return f"your file stopped Python while it was being imported (SystemExit {error.get('message', '')})"
        if error.get("type") in ("SyntaxError", "IndentationError", "TabError") and error.get("line"):
            text = f": {error['text']}" if error.get("text") else ""
            return f"your file has a {error['type']} at line {error['line']} ({error.get('message', '')}){text}"
        return f"importing your file raised {_exception(error)}"
    return f"your file could not be imported: {start.detail}"


def _exception(error: dict[str, Any]) -> str:
    text = f"{error.get('type', 'Exception')}"
    if error.get("message"):
        text += f": {error['message']}"
    frames = error.get("frames") or []
    if error.get("type") == "MemoryError":
        text += " (it ran out of memory: the limit is 512 MiB)"
    if frames:
        last = frames[-1]
        where = f"{last.get('file')} line {last.get('line')}"
        if last.get("text"):
            where += f": {last['text']}"
        text += f" ({where})"
    return text
