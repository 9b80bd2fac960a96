"""Exercise 4, stretch — reading the contiguous allocator's `runs` and `num_free` as the contract
states them, for the cases of contiguous.py, and what a wrong read shows.

* `read_runs`: `runs` is a property holding a list of `(start, length)` tuples of ints. A run given as
  a list `[start, length]` is named: `[0, 10] == (0, 10)` is False in Python, so a caller that
  compares runs with the contract's `[(0, 10)]` sees a mismatch although the pages are right.
  Runs that are ints are named when a probe shows they are the runs' starts alone (`starts_only`).
* `returned_pages`: allocate's result. None, from pages that were taken all the same, is named as
  `return pages.sort()`: list.sort() sorts in place and returns None (`sort_returned`).
* `listed_runs`: the runs as tuples, for the generated scenes, with the same naming of starts alone.
* `free_is_runs_total`: the generated scenes' num_free against the allocator's own runs.
* `runs_counted`: when num_free differs from the reference's, a fresh allocator of 6 pages shows
  whether num_free counts the free runs instead of the free pages in them: 1 with one run of 6
  pages free, 2 with the runs (0, 1) and (2, 4), 5 pages, free.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_probes import runs_after
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
        seen = f"runs is {got!r}: it must be a list of (start, length) pairs"
        raise starts_only(type(a), seen) or AssertionError(seen) from None
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


def listed_runs(a) -> list[tuple]:
    """`a.runs` as tuples, read as they are (the generated scenes compare them with the reference's);
    runs of ints are named when `starts_only` confirms they are the starts alone."""
    try:
        return [tuple(r) for r in a.runs]
    except TypeError:
        mistake = starts_only(type(a), f"runs is {a.runs!r}: it must be a list of (start, length) pairs")
        if mistake is None:
            raise
        raise mistake from None


def free_is_runs_total(a, i: int) -> None:
    """The stretch's num_free against its own runs after step `i`: when they disagree, a probe on a fresh
    allocator says whether num_free counts the runs instead of their pages (named before any hint that
    reads only which step's count differs)."""
    runs = listed_runs(a)
    total = sum(length for _, length in runs)
    if a.num_free != total:
        seen = f"after step {i}, num_free is {a.num_free} with runs {runs} ({total} pages free)"
        mistake = runs_counted(type(a), seen)
        if mistake is not None:
            raise mistake


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


RUNS_STARTS_ONLY = (
    "runs lists (start, length) pairs: sorting or iterating a dict gives its keys alone (here the starts), "
    "so sort its .items() to get the pairs"
)


def starts_only(cls, seen: str) -> Optional[Mistake]:
    """On a fresh allocator of 10 pages, when runs reads [0], and [3] after allocate(3) (the contract's
    [(0, 10)] and [(3, 7)]): the Mistake that says runs lists the starts of the free runs without their
    lengths (`seen`: what the case saw). Lengths alone would read [10] and [7], ends [10] and [10]. Else None."""
    try:
        a = cls(10)
        new = list(a.runs)
        a.allocate(3)
        later = list(a.runs)
    except Exception:
        return None
    if new != [0] or later != [3]:
        return None
    return Mistake(
        f"{seen}. A fresh allocator of 10 pages has runs [0], and [3] after allocate(3), where the contract "
        "has [(0, 10)] and [(3, 7)]: your runs are the starts of the free runs, without their lengths",
        RUNS_STARTS_ONLY,
    )


SORT_RETURNS_NONE = (
    "list.sort() sorts the list in place and returns None, so `return pages.sort()` returns None: "
    "return sorted(pages), or call pages.sort() and then return pages"
)


NOT_A_LIST = (
    "allocate(n) returns a list of page ids, not a {kind}: a {kind} never equals the list of the same ids, and "
    "the caller cannot append to it or add a list to it; build the list, e.g. list(range(start, start + n))"
)


def returned_pages(a, n: int, got):
    """allocate(n)'s result `got`, as it is, unless it is None and `sort_returned` confirms the pages were
    taken all the same (then the Mistake that names `return pages.sort()`), or it is not a list: then the
    Mistake that names the type it is (a range for the run it took, a tuple, a set)."""
    if got is None:
        mistake = sort_returned(type(a), f"allocate({n}) returned None: it must return a list of page ids")
        if mistake is not None:
            raise mistake
    if got is not None and not isinstance(got, list):
        kind = type(got).__name__
        raise Mistake(
            f"allocate({n}) returned {got!r}, a {kind}: it must return a list of page ids", NOT_A_LIST.format(kind=kind)
        )
    return got


def sort_returned(cls, seen: str) -> Optional[Mistake]:
    """On a fresh allocator of 4 pages, when allocate(2) returns None yet num_free falls to 2, and
    allocate(1) then returns None and num_free falls to 1: the allocator took the pages and lost the
    list on the way out, as `return pages.sort()` does (`seen`: what the case saw). Else None."""
    try:
        a = cls(4)
        first = (a.allocate(2), a.num_free)
        second = (a.allocate(1), a.num_free)
    except Exception:
        return None
    if first != (None, 2) or second != (None, 1):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, allocate(2) returns None while num_free falls to 2, and "
        "allocate(1) returns None while it falls to 1: your allocate takes the pages but returns None instead "
        "of them (the result of pages.sort(), or no return at all)",
        SORT_RETURNS_NONE,
    )


MISPAIRED = (
    "pair each start with its own length: sorting the starts alone and zipping them with the lengths in "
    "another order (a dict's .values() come in the order the runs were made) gives a start another run's "
    "length; sort the (start, length) pairs together, e.g. sorted(self.by_start.items())"
)


def mispaired(cls, seen: str, got: list[tuple], want: list[tuple]) -> Optional[Mistake]:
    """Runs `got` have the right starts and the right lengths, but not paired as in `want`: when a fresh
    allocator lists the runs right if they were made in order of their starts, and pairs the starts with
    the lengths in the order the runs were made otherwise, the Mistake that says so. Else None."""
    if [s for s, _ in got] != [s for s, _ in want] or sorted(n for _, n in got) != sorted(n for _, n in want):
        return None
    in_order = runs_after(cls, [[1], [7, 8]], takes=(10,))
    out_of_order = runs_after(cls, [[7, 8], [1]], takes=(10,))
    if in_order != [(1, 1), (7, 2)] or out_of_order != [(1, 2), (7, 1)]:
        return None
    return Mistake(
        f"{seen}: the right starts and the right lengths, paired wrong. On a fresh allocator of 10 pages, all "
        "handed out by allocate(10): free([1]) then free([7, 8]) gives runs [(1, 1), (7, 2)], but free([7, 8]) "
        "then free([1]) gives [(1, 2), (7, 1)]: your runs pair the sorted starts with the lengths in the order "
        "the runs were made",
        MISPAIRED,
    )
