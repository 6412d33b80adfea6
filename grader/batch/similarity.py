"""Pairs of learners whose work is unusually alike: evidence for an instructor to look at, never a verdict.

Two signals, each weighed by how rare it is in the class:

- code: winnowed fingerprints (Schleimer, Wilkerson and Aiken, SIGMOD 2003)
  of each learner's normalised token stream (``code_tokens``: names,
  literals, comments, formatting and the order of functions do not count).
  Fingerprints of the handout's code (the stubs and scaffold every learner
  starts from, given as ``boilerplate``) are dropped.
- outputs: the same wrong value at the same hidden input of the same check
  (``similarity_inputs.wrong_outputs`` reads them from a learner's result).

A signal shared by many learners is how the exercise is solved (or the
usual mistake), not a copy: only signals held by at most ``rare_limit``
learners make pairs, and each counts ``log((N + 1) / holders)``, so a long
run of rare shared code outweighs a short solution that several learners
wrote the same way. Pairs are found through an index from signal to
holders, never by comparing every pair; only the pairs listed get their
matched passages worked out.

Nothing here changes a grade or writes into a learner's result or feedback;
``similarity_html`` turns what this finds into the instructor's page.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.batch.code_tokens import CodeToken, normalise_files
from grader.batch.similarity_inputs import WrongOutput, learner_code, wrong_outputs

__all__ = [
    "GRAM",
    "WINDOW",
    "Passage",
    "SharedOutput",
    "SimilarPair",
    "Similarity",
    "WrongOutput",
    "find_similar",
    "learner_code",
    "wrong_outputs",
]

GRAM = 12  # tokens in one fingerprinted run: about one line of code; shorter runs are coincidence
WINDOW = 4  # winnowing window: any run of GRAM + WINDOW - 1 shared tokens shares at least one fingerprint
OUTPUT_WEIGHT = 10.0  # one rare wrong value in common counts as about two lines of rare code in common
MIN_SHARED = 3  # fewer rare fingerprints in common than this (and no wrong output) is not worth a look
PASSAGES_SHOWN = 12
_NEVER = 1 << 64  # above every hash: winnowing picks it only in a window of given code alone


@dataclass(frozen=True)
class SharedOutput:
    """A wrong output two learners share, and how many in the class gave it."""

    output: WrongOutput
    holders: int


@dataclass(frozen=True)
class Passage:
    """A stretch of code two learners share: each side's lines as ``(file, first, last)`` blocks."""

    first: tuple[tuple[str, int, int], ...]
    second: tuple[tuple[str, int, int], ...]
    tokens: int


@dataclass(frozen=True)
class SimilarPair:
    """Two learners (names in order) and what they share; ``score`` is ``code_score + output_score``."""

    first: str
    second: str
    score: float
    code_score: float
    output_score: float
    shared_fingerprints: int
    first_share: float  # of the first learner's fingerprints, the part the second has too
    second_share: float
    outputs: tuple[SharedOutput, ...] = ()
    passages: tuple[Passage, ...] = ()


@dataclass
class Similarity:
    """What ``find_similar`` found: the listed pairs, best first, and the figures the page explains."""

    learners: int
    rare_limit: int
    candidate_pairs: int
    pairs: list[SimilarPair] = field(default_factory=list)


def find_similar(
    code: Mapping[str, Mapping[str, str]],
    *,
    boilerplate: Sequence[str] = (),
    outputs: Mapping[str, Iterable[WrongOutput]] | None = None,
    limit: int = 50,
) -> Similarity:
    """The pairs of learners most alike, best first, at most ``limit`` of them.

    ``code``: each learner's files (name to source). ``boilerplate``: code
    every learner was given, which does not count. ``outputs``: each
    learner's wrong outputs (``wrong_outputs``). The same input gives the
    same pairs in the same order.
    """
    learners = sorted(code)
    count = len(learners)
    rare = rare_limit(count)
    streams = {name: normalise_files(dict(code[name])) for name in learners}
    given = boilerplate_hashes(boilerplate)
    prints = {name: set(fingerprints(streams[name], given)) for name in learners}
    wrong = {name: set((outputs or {}).get(name, ())) for name in learners}
    code_index, output_index = _rare_index(prints, rare), _rare_index(wrong, rare)
    best: list[tuple[float, _Backwards, _Backwards]] = []  # a heap of the best ``limit`` pairs so far
    candidates = 0
    for first in learners:
        # Each pair is scored once, by its first learner, from the signals it holds that few others do.
        code_weight, code_count = _partners(prints[first], code_index, first, count)
        output_weight, _ = _partners(wrong[first], output_index, first, count)
        partners = code_weight.keys() | output_weight.keys()
        candidates += len(partners)
        for second in partners:
            if code_count.get(second, 0) < MIN_SHARED and second not in output_weight:
                continue
            score = round(code_weight.get(second, 0.0) + OUTPUT_WEIGHT * output_weight.get(second, 0.0), 6)
            entry = (score, _Backwards(first), _Backwards(second))
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif entry > best[0]:
                heapq.heapreplace(best, entry)
    listed = [
        _with_passages(_pair(first.name, second.name, prints, wrong, code_index, output_index, count), streams, given)
        for _, first, second in sorted(best, reverse=True)
    ]
    return Similarity(learners=count, rare_limit=rare, candidate_pairs=candidates, pairs=listed)


@dataclass(frozen=True)
class _Backwards:
    """A learner's name, ordered backwards: among equal scores, the heap keeps the names first in order."""

    name: str

    def __lt__(self, other: _Backwards) -> bool:
        return self.name > other.name

    def __gt__(self, other: _Backwards) -> bool:
        return self.name < other.name


def _pair(
    first: str,
    second: str,
    prints: Mapping[str, set[int]],
    wrong: Mapping[str, set[WrongOutput]],
    code_index: Mapping[int, list[str]],
    output_index: Mapping[WrongOutput, list[str]],
    count: int,
) -> SimilarPair:
    """One listed pair, with what it shares worked out again from the indexes."""
    shared = [value for value in prints[first] & prints[second] if value in code_index]
    code_score = sum(_weight(len(code_index[value]), count) for value in shared)
    common = sorted(out for out in wrong[first] & wrong[second] if out in output_index)
    output_score = OUTPUT_WEIGHT * sum(_weight(len(output_index[out]), count) for out in common)
    return SimilarPair(
        first=first,
        second=second,
        score=round(code_score + output_score, 6),
        code_score=round(code_score, 6),
        output_score=round(output_score, 6),
        shared_fingerprints=len(shared),
        first_share=_share(prints[first], prints[second]),
        second_share=_share(prints[second], prints[first]),
        outputs=tuple(SharedOutput(out, len(output_index[out])) for out in common),
    )


def rare_limit(learners: int) -> int:
    """How many learners may share a signal for it to count: at least 10, and the square root of the class."""
    return max(10, math.isqrt(max(learners, 0)))


def _weight(holders: int, count: int) -> float:
    return math.log((count + 1) / holders)


def _rare_index(held: Mapping[str, set[Any]], rare: int) -> dict[Any, list[str]]:
    """Each signal held by 2 to ``rare`` learners, with its holders in name order."""
    index: dict[Any, list[str]] = defaultdict(list)
    for name in sorted(held):
        for signal in held[name]:
            index[signal].append(name)
    return {signal: names for signal, names in index.items() if 2 <= len(names) <= rare}


def _partners(
    mine: set[Any], index: Mapping[Any, list[str]], name: str, count: int
) -> tuple[dict[str, float], dict[str, int]]:
    """The learners after ``name`` who share a rare signal with it: their summed weights and counts."""
    weights: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for signal in mine:
        holders = index.get(signal)
        if holders is None:
            continue
        weight = _weight(len(holders), count)
        for other in holders[bisect.bisect_right(holders, name) :]:
            weights[other] += weight
            counts[other] += 1
    return weights, counts


_MOD = (1 << 61) - 1  # a Mersenne prime: the rolling hash stays exact in Python's integers
_BASE = 1_000_003


def gram_hashes(tokens: Sequence[CodeToken]) -> list[int]:
    """The hash of every run of ``GRAM`` tokens, in order (none for a shorter stream).

    A rolling polynomial hash over each token's stable value (``blake2b`` of
    its text), so the same runs hash alike in every process, unlike ``hash``.
    """
    values: dict[str, int] = {}
    numbers = []
    for token in tokens:
        value = values.get(token.text)
        if value is None:
            digest = hashlib.blake2b(token.text.encode("utf-8"), digest_size=8).digest()
            value = values[token.text] = int.from_bytes(digest, "big") % _MOD
        numbers.append(value)
    if len(numbers) < GRAM:
        return []
    top = pow(_BASE, GRAM - 1, _MOD)
    rolling = 0
    for value in numbers[:GRAM]:
        rolling = (rolling * _BASE + value) % _MOD
    hashes = [rolling]
    for start in range(1, len(numbers) - GRAM + 1):
        rolling = ((rolling - numbers[start - 1] * top) * _BASE + numbers[start + GRAM - 1]) % _MOD
        hashes.append(rolling)
    return hashes


def own_grams(tokens: Sequence[CodeToken], given: frozenset[int]) -> list[int | None]:
    """``gram_hashes``, with ``None`` for every run that touches the given code.

    A run that starts in a stub and ends in the learner's own line is as
    shared as the stub: every learner who kept the stub has its tokens there.
    """
    hashes = gram_hashes(tokens)
    touched = [False] * len(tokens)
    for position, value in enumerate(hashes):
        if value in given:
            touched[position : position + GRAM] = [True] * GRAM
    starts_touched = [False] * (len(hashes) + 1)  # whether the run from each position holds a given token
    run = sum(touched[:GRAM])
    for position in range(len(hashes)):
        starts_touched[position] = run > 0
        run += (touched[position + GRAM] if position + GRAM < len(touched) else 0) - touched[position]
    return [None if starts_touched[position] else value for position, value in enumerate(hashes)]


def fingerprints(tokens: Sequence[CodeToken], given: frozenset[int] = frozenset()) -> dict[int, int]:
    """The learner's fingerprints (winnowed hashes of runs outside the given code), each at its first position."""
    grams = own_grams(tokens, given)
    chosen = winnow([value if value is not None else _NEVER for value in grams])
    return {value: position for value, position in chosen.items() if grams[position] is not None}


def winnow(hashes: Sequence[int]) -> dict[int, int]:
    """Winnowing: in each window of ``WINDOW`` hashes, the smallest (the rightmost of equals), with its position.

    Returns each selected hash with the first position it was selected at.
    """
    if len(hashes) <= WINDOW:
        return {value: hashes.index(value) for value in sorted(set(hashes))}
    chosen: dict[int, int] = {}
    for start in range(len(hashes) - WINDOW + 1):
        window = hashes[start : start + WINDOW]
        smallest = min(window)
        position = start + WINDOW - 1 - window[::-1].index(smallest)
        chosen.setdefault(smallest, position)
    return chosen


def boilerplate_hashes(texts: Sequence[str]) -> frozenset[int]:
    """Every run's hash in the given code (not only the winnowed ones), so no fingerprint of it survives."""
    found: set[int] = set()
    for number, text in enumerate(texts):
        found.update(gram_hashes(normalise_files({f"given-{number}.py": text})))
    return frozenset(found)


def _share(mine: set[int], theirs: set[int]) -> float:
    return round(len(mine & theirs) / len(mine), 4) if mine else 0.0


def _with_passages(pair: SimilarPair, streams: Mapping[str, list[CodeToken]], given: frozenset[int]) -> SimilarPair:
    """The pair with its matched passages: runs of tokens both have, outside the given code, longest first."""
    first, second = streams[pair.first], streams[pair.second]
    where: dict[int, list[int]] = defaultdict(list)
    for position, value in enumerate(own_grams(second, given)):
        if value is not None:
            where[value].append(position)
    matches = [
        (a, b) for a, value in enumerate(own_grams(first, given)) if value is not None for b in where.get(value, ())[:4]
    ]
    runs: list[tuple[int, int, int]] = []  # (start in first, start in second, length in grams)
    ongoing: dict[tuple[int, int], int] = {}  # (next a, next b) -> index in runs
    for a, b in matches:
        index = ongoing.pop((a, b), None)
        if index is None:
            runs.append((a, b, 1))
            index = len(runs) - 1
        else:
            start_a, start_b, length = runs[index]
            runs[index] = (start_a, start_b, length + 1)
        ongoing[(a + 1, b + 1)] = index
    best = sorted(runs, key=lambda run: (-run[2], run[0], run[1]))
    passages: list[Passage] = []
    covered: set[int] = set()
    for start_a, start_b, length in best:
        span = range(start_a, start_a + length + GRAM - 1)
        if covered.issuperset(span):
            continue  # the same code matched again elsewhere (repeated lines): shown once
        covered.update(span)
        passages.append(
            Passage(
                first=_blocks(first[start_a : start_a + length + GRAM - 1]),
                second=_blocks(second[start_b : start_b + length + GRAM - 1]),
                tokens=length + GRAM - 1,
            )
        )
        if len(passages) == PASSAGES_SHOWN:
            break
    return SimilarPair(**{**pair.__dict__, "passages": tuple(passages)})


def _blocks(tokens: Sequence[CodeToken]) -> tuple[tuple[str, int, int], ...]:
    """The source lines a run of tokens covers, one block per top-level statement it touches."""
    blocks: list[tuple[str, int, int]] = []
    unit = None
    for token in tokens:
        if blocks and token.unit == unit and token.file == blocks[-1][0]:
            file, low, high = blocks[-1]
            blocks[-1] = (file, min(low, token.line), max(high, token.line))
        else:
            blocks.append((token.file, token.line, token.line))
            unit = token.unit
    return tuple(blocks)
