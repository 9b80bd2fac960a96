"""Exercise 4, stretch — reading the contiguous allocator's `runs` and `num_free` as the contract
states them, for the cases of contiguous.py, and what a wrong read shows.

* `read_runs`: `runs` is a property holding a list of `(start, length)` tuples of ints. A run given as
  a list `[start, length]` is named: `[0, 10] == (0, 10)` is False in Python, so a caller that
  compares runs with the contract's `[(0, 10)]` sees a mismatch although the pages are right.
* `runs_counted`: when num_free differs from the reference's, a fresh allocator of 6 pages shows
  whether num_free counts the free runs instead of the free pages in them: 1 with one run of 6
  pages free, 2 with the runs (0, 1) and (2, 4), 5 pages, free.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

RUNS_AS_LISTS = (
    "each run is a tuple (start, length), not a list [start, length]: a list never equals a tuple in Python, "
    "so runs == [(0, 10)] is False for [[0, 10]]"
)


def read_runs(a) -> list[tuple[int, int]]:
    """`a.runs`, checked against the contract: a property, a list of (start, length) tuples of ints."""
    got = a.runs
    assert not callable(got), "runs is a method: make it a property (the grader reads allocator.runs)"
    try:
        pairs = [tuple(r) for r in got]
    except TypeError:
        raise AssertionError(f"runs is {got!r}: it must be a list of (start, length) pairs") from None
    assert all(len(r) == 2 and all(isinstance(x, int) for x in r) for r in pairs), (
        f"runs is {got!r}: it must be a list of (start, length) pairs of ints"
    )
    lists = [r for r in got if isinstance(r, list)]
    if lists:
        raise Mistake(
            f"runs is {got!r}: its runs are lists such as {lists[0]!r}, not tuples; the contract's runs are "
            f"(start, length) tuples (a new allocator of 10 pages has runs == [(0, 10)]), and "
            f"{lists[0]!r} == {tuple(lists[0])!r} is False, so code that compares runs sees a mismatch",
            RUNS_AS_LISTS,
        )
    return pairs


RUNS_COUNTED = "num_free is the number of free pages, the sum of the runs' lengths, not the number of runs"


def runs_counted(cls, seen: str) -> Optional[Mistake]:
    """On a fresh allocator of 6 pages, when num_free reads 1 with the one run (0, 6) free, and 2 after
    allocate(1), allocate(1) and free([0]) leave the runs (0, 1) and (2, 4), 5 pages, free: the Mistake
    that says num_free counts the runs, not the pages in them (`seen`: what the case saw). Else None."""
    try:
        a = cls(6)
        new = (a.num_free, [tuple(r) for r in a.runs])
        a.allocate(1)
        a.allocate(1)
        a.free([0])
        later = (a.num_free, [tuple(r) for r in a.runs])
    except Exception:
        return None
    if new != (1, [(0, 6)]) or later != (2, [(0, 1), (2, 4)]):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, num_free is 1 with runs [(0, 6)], and 2 after allocate(1), "
        "allocate(1), free([0]) leave runs [(0, 1), (2, 4)]: 5 pages are free, but your num_free counts the "
        "free runs, not the pages in them",
        RUNS_COUNTED,
    )
