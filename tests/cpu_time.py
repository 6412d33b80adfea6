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


def grows_linearly(scan: Callable[[str], object], text: str) -> bool:
    """Whether ``scan`` of ``text`` costs about four times what a quarter of it (its first and last eighths) does.

    A quadratic scan would cost sixteen times as much; held to the ratio, not to a time, since a MiB takes about
    a second of CPU on a busy machine. (At most 5 s for the whole text, whatever the ratio.)
    """
    eighth = len(text) // 8
    part = text[:eighth] + text[-eighth:]
    # The least of three runs each: one run of a few hundredths of a second can be slowed by half by the
    # machine alone, which is enough to move the ratio past 8; the least is what the code costs.
    quarter = min(cpu_seconds(lambda: scan(part)) for _ in range(3))
    whole = cpu_seconds(lambda: scan(text))
    if whole < 8 * max(quarter, 0.01):
        return whole < 5
    whole = min([whole] + [cpu_seconds(lambda: scan(text)) for _ in range(2)])
    return whole < 8 * max(quarter, 0.01) and whole < 5
