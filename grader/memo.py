"""One bounded, least-recently-used memo: the only in-memory cache shape the grader uses.

A grading session keeps what it has worked out (plans, call texts, findings
on outputs it has judged) so the next submission does not work it out
again. Every such store is a ``BoundedMemo`` owned by the object that uses
it and passed explicitly: nothing is module-global, nothing is keyed by
``id()`` (an id is reused once its object is gone, so such a key can hand
back another object's value), and nothing grows without bound in a batch
that grades thousands of learners.

Keys must be hashable values that say what the entry depends on (a spec's
digest, an exercise id and check ids, the bytes of an output). An optional
``weigh`` function bounds the total size as well as the count, for entries
whose sizes differ by orders of magnitude (answer payloads).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

__all__ = ["BoundedMemo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """A mapping that keeps at most ``max_entries`` entries (and ``max_weight``, if weighed).

    Reading an entry makes it the most recently used; adding one past a
    bound drops the least recently used until both bounds hold again. An
    entry heavier than ``max_weight`` on its own is not kept at all.
    """

    def __init__(
        self, max_entries: int, *, max_weight: int | None = None, weigh: Callable[[V], int] | None = None
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries!r}")
        if (max_weight is None) != (weigh is None):
            raise ValueError("max_weight and weigh go together")
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._weights: dict[K, int] = {}
        self._max_entries = max_entries
        self._max_weight = max_weight
        self._weigh = weigh
        self._weight = 0

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value for ``key`` (now the most recently used), or ``default``."""
        try:
            value = self._entries[key]
        except KeyError:
            return default
        self._entries.move_to_end(key)
        return value

    def __getitem__(self, key: K) -> V:
        value = self._entries[key]
        self._entries.move_to_end(key)
        return value

    def __setitem__(self, key: K, value: V) -> None:
        self.pop(key)
        weight = 0
        if self._weigh is not None:
            weight = self._weigh(value)
            assert self._max_weight is not None
            if weight > self._max_weight:
                return
        self._entries[key] = value
        if self._weigh is not None:
            self._weights[key] = weight
            self._weight += weight
        self._evict()

    def setdefault_with(self, key: K, make: Callable[[], V]) -> V:
        """The value for ``key``, made by ``make()`` and kept when it is not there yet."""
        try:
            value = self._entries[key]
        except KeyError:
            value = make()
            self[key] = value
            return value
        self._entries.move_to_end(key)
        return value

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Remove ``key`` and return its value, or ``default``."""
        if key not in self._entries:
            return default
        self._weight -= self._weights.pop(key, 0)
        return self._entries.pop(key)

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()
        self._weights.clear()
        self._weight = 0

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._entries))

    @property
    def weight(self) -> int:
        """The total weight of what is kept (0 when entries are not weighed)."""
        return self._weight

    def _evict(self) -> None:
        while len(self._entries) > self._max_entries or (
            self._max_weight is not None and self._weight > self._max_weight
        ):
            key, _ = self._entries.popitem(last=False)
            self._weight -= self._weights.pop(key, 0)
