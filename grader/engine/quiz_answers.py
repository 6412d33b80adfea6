"""How a learner's answer to a quiz question is read, before it is graded: the options picked, the number given.

Nothing here knows an answer key: a reason written here depends on the
question's form alone (its options, its type), so a handout that has no key
can say as much as a graded quiz about an answer it cannot read.

Letters are read in any case, each optionally written ``A)``, ``(a)`` or
``A.``. A single-choice answer is one letter. A multiple-choice answer is a
list of letters (``[A, C]``) or one string of them, read as a list when it is
unambiguous:

- letters separated by commas, semicolons, spaces, ``&`` or the word ``and``
  (``A, C``, ``a;c``, ``A C``, ``A and C``), optionally inside brackets
  (``"[a, c]"``); a letter given twice counts once;
- letters written together (``AC``, ``abc``), only when every one of them is
  an option letter of the question and none repeats.

Anything else (``A or C``, ``A/C``, ``ACA``, ``ABX`` where the options are A
to E) is not an option, and the reason says so and lists the options. On a
single-choice question a run such as ``AB`` is not an option either, and
separated letters (``A, B``) get "one option only".
"""

from __future__ import annotations

import datetime
import math
import re
import string
from typing import Any

from msgspec import Struct, field

from grader.safeyaml import LongInteger

__all__ = [
    "NUMBER_FORM",
    "ChoiceReading",
    "letters",
    "listed",
    "read_choice",
    "read_choice_form",
    "read_number",
    "shown_answer",
]


def letters(count: int) -> str:
    """Option letters in order: ``ABCD...``."""
    return string.ascii_uppercase[:count]


class ChoiceReading(Struct):
    """A choice answer as read: the option letters picked (in order, each once) and what is not an option."""

    picks: list[str] = field(default_factory=list)
    not_options: list[str] = field(default_factory=list)


# Between letters: a comma, semicolon or ampersand, with any spaces around it, or spaces alone.
_SEPARATOR = re.compile(r"\s*[,;&]\s*|\s+")
_TOKEN = re.compile(r"\(?([A-Za-z]+)[).]?")


def read_choice(given: Any, options: str, *, multiple: bool) -> ChoiceReading | None:
    """The letters a choice answer picks among ``options`` (``"ABCDE"``), or ``None`` for a value of no
    readable kind (a number, a mapping, an empty string); the rules are in the module docstring."""
    if isinstance(given, str):
        items = [given]
    elif isinstance(given, list) and all(isinstance(item, str) for item in given):
        items = given
    else:
        return None
    reading = ChoiceReading()
    for item in items:
        text = item.strip()
        if len(items) == 1 and text[:1] + text[-1:] in ("[]", "()"):  # a list written inside a quoted string
            text = text[1:-1].strip()
        tokens = [token for token in _SEPARATOR.split(text) if token]
        if len(tokens) > 1:
            tokens = [token for token in tokens if token.lower() != "and"] or tokens
        for token in tokens:
            for letter in _token_letters(token, options, multiple):
                if letter is None:
                    reading.not_options.append(token.upper() if len(token) == 1 else token)
                elif letter not in reading.picks:
                    reading.picks.append(letter)
    if not reading.picks and not reading.not_options:
        return None
    return reading


def _token_letters(token: str, options: str, multiple: bool) -> list[str | None]:
    """The option letters one token names, or ``[None]`` when it is not an option (or a run of options)."""
    match = _TOKEN.fullmatch(token)
    if match is None:
        return [None]
    word = match.group(1).upper()
    if len(word) == 1:
        return [word] if word in options else [None]
    if multiple and len(set(word)) == len(word) and all(letter in options for letter in word):
        return list(word)
    return [None]


def read_choice_form(given: Any, options: str, multiple: bool) -> list[str] | str:
    """The letters a choice answer picks, sorted, or why it is not of the form the question asks for.

    The reason depends on the options alone, never on the answer key.
    """
    if given is None:
        pick = "every option that applies" if multiple else "one option"
        return f"Not answered: pick {pick} of {', '.join(options)}."
    reading = read_choice(given, options, multiple=multiple)
    if reading is None:
        form = "a list of option letters" if multiple else "one option letter"
        return f"{shown_answer(given)} is not an answer here: give {form} from {', '.join(options)}."
    if reading.not_options:
        outside = reading.not_options
        verb = "is not an option" if len(outside) == 1 else "are not options"
        return f"{listed([_letter(p) for p in outside])} {verb}; the options are {', '.join(options)}."
    chosen = sorted(reading.picks)
    if not multiple and len(chosen) > 1:
        return f"One option only: you gave {', '.join(chosen)}."
    return chosen


# What a numeric answer looks like, with no example value: any example could be some question's answer.
NUMBER_FORM = "one finite number, in decimal or scientific notation"


def read_number(given: Any) -> float | str:
    """The answer as a finite float, or why it is not one (``is a yes/no value, not a number``)."""
    if isinstance(given, bool):  # before int: YAML reads yes, no, on, off, true, false as booleans
        return "is a yes/no value, not a number"
    if isinstance(given, LongInteger):
        return "is far too large"
    if isinstance(given, str):
        try:
            given = float(given.strip())  # a number written in quotes still counts
        except ValueError:
            return "is text, not a number"
    if isinstance(given, int):
        if given.bit_length() > 1000:  # float() overflows near 2**1024
            return "is far too large"
        given = float(given)
    if not isinstance(given, float):
        return "is not a number"
    if math.isnan(given):
        return "is not a number"
    if math.isinf(given):
        return "is infinite"
    return given


_SHOWN_CHARS = 40
_SHOWN_ITEMS = 3


def shown_answer(value: Any) -> str:
    """A learner's answer as a reason quotes it: short, whatever its size or type."""
    if value is None or isinstance(value, (bool, float)):
        names: dict[bool | float | None, str] = {None: "null", True: "true", False: "false"}
        return names.get(value, repr(value))
    if isinstance(value, int) and value.bit_length() > 4000:  # str() refuses past 4,300 digits
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, (int, LongInteger)):
        text = str(value)
        digits = sum(ch.isalnum() for ch in text)
        return text if len(text) <= _SHOWN_CHARS else f"{text[:20]}...{text[-8:]} ({digits} digits)"
    if isinstance(value, str):
        if len(value) <= _SHOWN_CHARS:
            return repr(value)
        return f"{value[:_SHOWN_CHARS]!r}... ({len(value)} characters)"
    if isinstance(value, (list, tuple)):  # one level deep: a list of lists shows as [[...], ...]
        return (
            "["
            + listed(
                [
                    "[...]"
                    if isinstance(item, (list, tuple))
                    else "{...}"
                    if isinstance(item, dict)
                    else shown_answer(item)
                    for item in value
                ]
            )
            + "]"
        )
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"the date {value.isoformat()}"
    if isinstance(value, bytes):
        return f"binary data ({len(value)} bytes)"
    if isinstance(value, (set, frozenset)):
        return f"a set of {len(value)} item{'s' if len(value) != 1 else ''}"
    return f"a {type(value).__name__} value"


def _letter(pick: str) -> str:
    """A pick that is not an option letter, quoted when it is more than plain letters and digits."""
    return pick if pick.isalnum() and pick.isascii() and len(pick) <= _SHOWN_CHARS else shown_answer(pick)


def listed(items: list[str]) -> str:
    """``A, B, C (and 4 more)``: the first few of many."""
    shown = ", ".join(items[:_SHOWN_ITEMS])
    return shown + (f" (and {len(items) - _SHOWN_ITEMS} more)" if len(items) > _SHOWN_ITEMS else "")
