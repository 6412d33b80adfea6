"""Cleaning what a learner process sends: its text becomes one safe line, its reports plain values.

Whatever a learner puts in an exception message, a frame or a type name ends
up in reasons; here it is escaped and bounded, and anything but the
expected keys of a report is dropped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clean_error", "clean_float_errors", "clean_layers", "clean_text", "clean_type"]

_FLOAT_KINDS = ("overflow", "invalid", "divide")
_KINDS = ("memory", "process", "network", "file", "import", "signal", "limits", "forbidden", "size", "not-raised")


def clean_text(value: Any, limit: int) -> str:
    """Learner-controlled text made safe to show: one line, control characters escaped, bounded.

    Whatever a learner puts in an exception message or a class name ends up
    in reasons; it must not move a terminal's cursor, fake a new line of the
    grader's own output, or carry an escape sequence.
    """
    text = str(value)[: limit * 2]
    if text.isprintable():  # the usual case (a type name, a plain message): nothing to escape
        return text[:limit]
    text = "".join(
        ch
        if ch.isprintable()
        else (" " if ch in "\n\r\t" else f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )
    return text[:limit]


def clean_type(value: Any) -> str:
    """A returned value's type name, made safe (``clean_text``)."""
    return clean_text(value, 40)


def clean_error(error: Any) -> dict[str, Any]:
    """Keep only the expected keys of a child's error report, as short, escaped strings."""
    if not isinstance(error, dict):
        return {"type": "Exception", "message": "", "frames": []}
    frames = []
    for frame in error.get("frames", [])[:20] if isinstance(error.get("frames"), list) else []:
        if isinstance(frame, dict):
            frames.append(
                {
                    "file": clean_text(frame.get("file", ""), 200),
                    "line": frame.get("line") if type(frame.get("line")) is int else None,
                    "function": clean_text(frame.get("function", ""), 100),
                    "text": clean_text(frame.get("text", ""), 200),
                }
            )
    cleaned: dict[str, Any] = {
        "type": clean_text(error.get("type", "Exception"), 100),
        "message": clean_text(error.get("message", ""), 500),
        "frames": frames,
    }
    for key in ("file", "text", "module"):
        if key in error:
            cleaned[key] = clean_text(error[key], 200)
    if type(error.get("line")) is int:
        cleaned["line"] = error["line"]
    if error.get("kind") in _KINDS:
        cleaned["kind"] = error["kind"]
    if type(error.get("errno")) is int:
        cleaned["errno"] = error["errno"]
    if type(error.get("step")) is int and 0 <= error["step"] < 1000:  # the failing step of a script
        cleaned["step"] = error["step"]
        if "expected" in error:
            cleaned["expected"] = clean_text(error["expected"], 100)
    return cleaned


def clean_float_errors(events: Any) -> list[dict[str, Any]]:
    """A child's report of NumPy floating-point errors: known kinds only, at most one each, text cleaned."""
    cleaned: list[dict[str, Any]] = []
    for event in events[:3] if isinstance(events, list) else []:
        if not isinstance(event, dict) or event.get("kind") not in _FLOAT_KINDS:
            continue
        if any(kept["kind"] == event["kind"] for kept in cleaned):
            continue
        kept = {"kind": event["kind"], "in": clean_text(event.get("in", ""), 60)}
        if "file" in event and type(event.get("line")) is int:
            kept.update(
                file=clean_text(event["file"], 200), line=event["line"], text=clean_text(event.get("text", ""), 200)
            )
        cleaned.append(kept)
    return cleaned


def clean_layers(layers: Any) -> dict[str, Any]:
    """A child's report of the layers it applied, as plain values (it is only informative)."""
    if not isinstance(layers, dict):
        return {}
    kept: dict[str, Any] = {}
    for key in ("caps_dropped", "rlimits", "landlock_abi", "seccomp"):
        value = layers.get(key)
        if type(value) in (bool, int):
            kept[key] = value
    return kept
