"""CPU seconds a piece of work took in this process: what a bound on a parser's cost is held to.

Wall time counts whatever else the machine runs (a shared CI runner, a parallel test run), so a
bound on it fails for reasons that say nothing about the code; this process's CPU time does not.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(work: Callable[[], object], expected: tuple[type[BaseException], ...] = ()) -> float:
    """CPU seconds ``work`` took; an exception of a type in ``expected`` ends it like a return.

    The collector is held off meanwhile: crafted input builds hundreds of thousands of containers,
    and the full passes they trigger walk everything else the test process holds, which says
    nothing about the parser; the grader's own process holds little.
    """
    collecting = gc.isenabled()
    gc.disable()
    started = time.process_time()
    try:
        work()
    except expected:
        pass
    finally:
        elapsed = time.process_time() - started
        if collecting:
            gc.enable()
    return elapsed


def grows_linearly(scan: Callable[[str], object], text: str, rounds: int = 5) -> bool:
    """Whether ``scan`` of ``text`` costs about four times what a quarter of it (its first and last eighths) does.

    A quadratic scan would cost sixteen times as much; held to the ratio, not to a time, since a MiB takes about
    a second of CPU on a busy machine. (At most 5 s for the whole text, whatever the ratio.)

    The quarter and the whole are timed in turns, and the least of each is compared: on a shared runner a
    neighbour on the same core can slow this process's CPU by half for a second or more, and timing all the
    quarters before the wholes let such a spell fall on the wholes alone (the ratio then passed 8 on a linear
    scan). A spell that falls on both sides moves the ratio little.
    """
    eighth = len(text) // 8
    part = text[:eighth] + text[-eighth:]
    quarters: list[float] = []
    wholes: list[float] = []
    for _ in range(rounds):
        quarters.append(cpu_seconds(lambda: scan(part)))
        wholes.append(cpu_seconds(lambda: scan(text)))
        if min(wholes) < 8 * max(min(quarters), 0.01):
            return min(wholes) < 5
        if min(wholes) > 40:
            break  # far from linear: more rounds of it would only hold the test up
    return False
