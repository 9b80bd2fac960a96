"""Exercise 4, stretch — a probe for one slip in finding the best fit, used by the cases of
contiguous.py when allocate(n) gave other pages than the reference's.

* `filtered_position_probe`: an answer that filters the run lengths down to those that hold n
  (`fitting = [ln for ln in lengths if ln >= n]`) and takes the position of the smallest in THAT list
  (`fitting.index(min(fitting))`) as the position of the run in the list of ALL runs (`starts[j]`).
  Whenever a run too short comes before the best fit, the position points at another run: often one
  too short, so the allocation runs on past its end into pages in use. On fresh allocators of 9
  pages, all handed out by allocate(9), allocate(2) is tried on two sets of free runs where that
  position lands on a run of 1 page: the answer then hands out that page and the page in use after it.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.holes import allocate_after_frees, runs_text
from minisgl_edu.grading.core import Mistake

FILTERED_POSITION = (
    "a position in the list of the runs that fit is not a position in the list of all runs: keep each run's "
    "start with its length when you filter (e.g. min((length, start) for start, length in runs if length >= n))"
)

# (the blocks of pages freed, the pages allocate(2) takes by the filtered position, by best fit)
_SCENES = (
    ([[0], [2, 3], [5, 6, 7, 8]], [0, 1], [2, 3]),  # runs (0, 1), (2, 2), (5, 4): fitting [2, 4], position 0
    ([[0, 1, 2], [4], [6, 7]], [4, 5], [6, 7]),  # runs (0, 3), (4, 1), (6, 2): fitting [3, 2], position 1
)


def filtered_position_probe(cls, seen: str) -> Optional[Mistake]:
    """When allocate(2) takes the filtered position's pages on both scenes (each a run of 1 page and the
    page in use after it), the Mistake that names that slip (`seen`: what the case saw); None otherwise."""
    got = [allocate_after_frees(cls, frees, 2) for frees, _, _ in _SCENES]
    if got != [wrong for _, wrong, _ in _SCENES]:
        return None
    (first, _, best_first), (second, _, best_second) = _SCENES
    return Mistake(
        f"{seen}. On fresh allocators of 9 pages, all handed out by allocate(9), allocate(2) with free runs "
        f"{runs_text(first)} gives {got[0]}, and with free runs {runs_text(second)} gives {got[1]}: each time you start "
        "at a run of 1 page and run on into a page in use. That run sits, among all the runs, at the position the "
        f"best fit has among the runs that hold 2 pages; best fit takes {best_first} and {best_second}",
        FILTERED_POSITION,
    )
