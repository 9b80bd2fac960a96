"""Exercise 6: the order of last use comes from a counter, not from a clock.

A stamp read from a clock (`time.time()`, `time.monotonic()`, `time.perf_counter()`, ...) is not the
order of the calls: calls close together get the same stamp (time.time() has a coarse step on many
systems), and the system clock can be set back. Tied stamps leave the order to the heap's
tie-breaker, so such an answer evicts a recently matched prefix some of the time, depending on the
machine's speed.

To see it without depending on real time, `check_no_clock` replays a few calls with every clock of
the `time` module (and any of them the answer's module imported by name) answering earlier and
earlier times, one step back per call, and compares what evict frees with the order of the calls.
An answer that stamps from a counter never reads the clock and is unaffected; an answer that stamps
from the clock then evicts in the reverse order of use, every time.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from minisgl_edu.grading.prefix_cache.tree import _evict, _expect_pages, _insert, _new

CLOCK_TIES = (
    "stamps from a clock (time.time(), time.monotonic(), ...) tie: use a counter that grows by one on every use"
)
_CLOCKS = ("time", "monotonic", "perf_counter", "process_time", "thread_time")


@contextmanager
def clock_going_back(cls) -> Iterator[None]:
    """Within the block, every clock of `time` (seconds and _ns) answers one second earlier per call;
    names that `cls`'s modules imported from `time` (`from time import time`) answer the same."""
    ticks = itertools.count()

    def seconds() -> float:
        return 2.0e9 - next(ticks)

    def nanos() -> int:
        return (2_000_000_000 - next(ticks)) * 1_000_000_000

    fakes = {}  # id of a clock function of `time` -> (that function, its stand-in)
    for name in _CLOCKS:
        for attr, fake in ((name, seconds), (f"{name}_ns", nanos)):
            if hasattr(time, attr):
                fakes[id(getattr(time, attr))] = (getattr(time, attr), fake)
    patched: list[tuple[object, str, object]] = []
    targets = [time] + [sys.modules[c.__module__] for c in cls.__mro__ if c.__module__ in sys.modules]
    try:
        for module in dict.fromkeys(targets):
            for attr, value in list(vars(module).items()):
                original, fake = fakes.get(id(value), (None, None))
                if original is not None and value is original:
                    patched.append((module, attr, value))
                    setattr(module, attr, fake)
        yield
    finally:
        for module, attr, value in reversed(patched):
            setattr(module, attr, value)


def _play(cls, matched: bool) -> list[int]:
    cache = _new(cls)
    _insert(cache, [1, 1], [10], 0, "the cache was empty")
    _insert(cache, [2, 2], [20], 0, "it shares nothing with [1, 1]")
    if matched:
        _expect_pages(cache, [1, 1], [10], "[1, 1] is cached")
    return sorted(_evict(cache, 1, {(1, 1): [[10]], (2, 2): [[20]]}))


def check_no_clock(cls) -> None:
    """[1, 1] (page 10) then [2, 2] (page 20) inserted: evict(1) frees 10; with [1, 1] matched after
    both inserts, it frees 20. Each is played as it is, then with the clock going back: an answer
    right the first time and wrong the second read the order of use from a clock. (One wrong as it
    is has another mistake, which the case's other checks name.)"""
    for matched, want in ((False, [10]), (True, [20])):
        if _play(cls, matched) != want:
            continue
        with clock_going_back(cls):
            freed = _play(cls, matched)
        if freed != want:
            uses = "[1, 1] (page 10) was inserted, then [2, 2] (page 20)" + (", then [1, 1] was matched" * matched)
            raise AssertionError(
                f"{uses}; evict(1) freed {want} as expected, and then {freed} when the grader ran the same calls "
                "with the clocks of the `time` module answering earlier and earlier times (a stand-in for calls "
                "close together, whose stamps tie, and for a clock set back). The order of use is the order of "
                f"the calls; your answer read it from a clock. Hint: {CLOCK_TIES}"
            )
