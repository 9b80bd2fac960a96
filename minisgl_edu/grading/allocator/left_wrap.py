"""Exercise 4, stretch — a probe for one slip of the contiguous allocator's free(), used by
contiguous_probes.good_free_failed when a free() of pages in use raised KeyError or left other runs.

* `left_wrap_probe`: a freed page p joins the free run that ends just before it only when p has a left
  neighbour, p > 0. An answer that keeps a flag per page and reads the left one as `is_free[p - 1]`
  without that test reads, for page 0, is_free[-1]: Python counts -1 from the end, so that is the LAST
  page's flag. While the last page is in use nothing shows; while it is free, free([0]) looks for a run
  ending at page 0 and fails (KeyError) or merges page 0 with the last page's run. On a fresh allocator of
  6 pages, all handed out by allocate(6): free([0]) alone, or after free([2]), gives the right runs, and
  free([2]) after free([5]) too, but free([0]) after free([5]) does not.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_replay import replay
from minisgl_edu.grading.core import Mistake

LEFT_WRAP = (
    "page 0 has no left neighbour, but a list read at p - 1 = -1 gives the last page's entry (Python counts -1 "
    "from the end): test p > 0 before reading the left neighbour, as p + 1 < num_pages on the right"
)


def _free_after(cls, first: list[int], page: int) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): free([p]) for each p of `first`, one
    call each, then free([page]); what replay saw (the runs, or 'raised <exception name>')."""

    def setup(a) -> bool:
        for p in first:
            a.free([p])
        return True

    return replay(cls, setup, lambda a: a.free([page]))


def left_wrap_probe(cls, seen: str) -> Optional[Mistake]:
    """When freeing page 0 goes right while the last page is in use, and freeing another page goes right while
    the last page is free, but freeing page 0 while the last page is free does not, the Mistake that says the
    left neighbour of page 0 was read at index -1 (`seen`: what the case saw); None otherwise."""
    if (
        _free_after(cls, [], 0) != [(0, 1)]
        or _free_after(cls, [2], 0) != [(0, 1), (2, 1)]
        or _free_after(cls, [5], 2) != [(2, 1), (5, 1)]
    ):
        return None
    got = _free_after(cls, [5], 0)
    if got is None or got == [(0, 1), (5, 1)]:
        return None
    did = got if isinstance(got, str) else f"left runs {got}"
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out by allocate(6): free([0]) gives runs [(0, 1)] "
        "while page 5 (the last) is in use, and free([5]) then free([2]) gives [(2, 1), (5, 1)]; but free([5]) "
        f"then free([0]) {did}, expected [(0, 1), (5, 1)]. Page 0 has no left neighbour, yet your free() looked "
        "for a free run ending just before it: read at p - 1 = -1, a list gives the last page's entry, and page "
        "5 is free",
        LEFT_WRAP,
    )
