"""BoundedMemo: the grader's one in-memory cache shape."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.memo import BoundedMemo


def test_memo_drops_the_least_recently_used_past_its_count() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo["a"], memo["b"] = 1, 2
    assert memo.get("a") == 1  # "a" is now the most recently used
    memo["c"] = 3
    assert "b" not in memo and memo.get("a") == 1 and memo.get("c") == 3


def test_memo_keeps_its_total_weight_under_the_bound() -> None:
    memo: BoundedMemo[str, bytes] = BoundedMemo(100, max_weight=10, weigh=len)
    memo["a"], memo["b"] = b"12345", b"1234"
    memo["c"] = b"123"
    assert "a" not in memo and memo.weight == 7
    memo["huge"] = b"x" * 11  # heavier than the bound on its own: not kept, nothing else lost
    assert "huge" not in memo and memo.weight == 7 and len(memo) == 2


def test_memo_replacing_a_key_reweighs_it() -> None:
    memo: BoundedMemo[str, bytes] = BoundedMemo(10, max_weight=10, weigh=len)
    memo["a"] = b"123456"
    memo["a"] = b"12"
    assert memo.weight == 2 and memo["a"] == b"12"


def test_memo_setdefault_with_makes_once() -> None:
    memo: BoundedMemo[str, list[int]] = BoundedMemo(4)
    made = []

    def make() -> list[int]:
        made.append(1)
        return [len(made)]

    assert memo.setdefault_with("k", make) == [1]
    assert memo.setdefault_with("k", make) == [1]
    assert made == [1]


@pytest.mark.parametrize(
    "arguments", [{"max_entries": 0}, {"max_entries": 1, "max_weight": 5}], ids=["no-room", "weight-without-weigh"]
)
def test_memo_refuses_bounds_that_make_no_sense(arguments: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        BoundedMemo(**arguments)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.binary(max_size=8)), max_size=60),
    st.integers(1, 5),
    st.integers(0, 20),
)
def test_memo_bounds_always_hold(writes: list[tuple[str, bytes]], entries: int, weight: int) -> None:
    memo: BoundedMemo[str, bytes] = BoundedMemo(entries, max_weight=weight, weigh=len)
    for key, value in writes:
        memo[key] = value
        assert len(memo) <= entries and memo.weight <= weight
        assert memo.weight == sum(len(memo[k]) for k in memo)
