"""Exercise 4, stretch — a probe for one slip in listing the pages taken from a run, used by
contiguous.py when allocate(n) raised ValueError or KeyError, or gave other pages than the reference's.

* `range_end_probe`: the `count` pages taken from a run that starts at `start` are
  range(start, start + count). An answer that writes `range(start, count)` reads range's second
  argument as "how many" instead of the end. From a run at page 0 the two agree, so a fresh allocator
  looks right; from a run that starts at or after `count` the range is empty, though the books took
  the pages, so the loop that serves the rest goes on to the next run (and, once every run is eaten,
  min() of no runs raises ValueError). On a fresh allocator, all handed out and two blocks given back,
  a free run at page 0 longer than the best-fitting run further on: allocate(n) lists nothing from the
  best fit, then takes n pages from the run at page 0. The answer returns [0 .. n-1] and its runs lost
  the best fit's first n pages too, on two scenes of different sizes.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

RANGE_END = (
    "range(start, stop) stops before its second argument, an end, not a count: the n pages of a run that "
    "starts at `start` are range(start, start + n); range(start, n) agrees with it only for a run at page 0"
)

# (pages in the pool, the blocks given back, n, what `range(start, count)` returns, its runs after)
_SCENES = (
    (10, ([0, 1, 2, 3, 4], [7, 8, 9]), 2, [0, 1], [(2, 3), (9, 1)]),
    (12, ([0, 1, 2, 3, 4, 5], [8, 9, 10, 11]), 3, [0, 1, 2], [(3, 3), (11, 1)]),
)


def _allocate_after(cls, num_pages: int, freed: tuple[list[int], ...], n: int):
    """On a fresh allocator of `num_pages` pages, all handed out by allocate(num_pages), the blocks `freed`
    given back: (the pages allocate(n) then takes, the runs after it); None when anything raised."""
    try:
        a = cls(num_pages)
        if sorted(a.allocate(num_pages)) != list(range(num_pages)):
            return None
        for block in freed:
            a.free(list(block))
        pages = sorted(a.allocate(n))
        return pages, [tuple(run) for run in a.runs]
    except Exception:
        return None


def range_end_probe(cls, seen: str) -> Optional[Mistake]:
    """When, on both scenes, allocate(n) returns the first n pages of the run at page 0 and the runs show
    that the best-fitting run lost its first n pages as well, the Mistake that says the pages were listed
    with range(start, count) (`seen`: what the case saw); None otherwise."""
    for num_pages, freed, n, pages, runs in _SCENES:
        if _allocate_after(cls, num_pages, freed, n) != (pages, runs):
            return None
    num_pages, (low, high), n, pages, runs = _SCENES[0]
    at = high[0]
    return Mistake(
        f"{seen}. On a fresh allocator of {num_pages} pages, all handed out by allocate({num_pages}), with "
        f"pages {low[0]}-{low[-1]} and {at}-{high[-1]} given back (free runs ({low[0]}, {len(low)}) and "
        f"({at}, {len(high)})), allocate({n}) gives {pages} and leaves runs {runs}; best fit gives "
        f"{list(range(at, at + n))}. Your books took pages {at}-{at + n - 1} from the run at page {at}, yet "
        f"listed none of them: range({at}, {n}) is empty, so you went on and took {n} more from the run at "
        f"page 0, where range(0, {n}) happens to be right. The end of the range is start + n, not n",
        RANGE_END,
    )
