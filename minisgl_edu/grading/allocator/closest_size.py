"""Exercise 4, stretch — a probe for one misreading of best fit, used by the cases of contiguous.py
when allocate(n) gave other pages than the reference's.

* `closest_size_probe`: best fit is the smallest free run that holds all n pages. An answer that
  reads it as "the run whose length is closest to n" (`min(abs(length - n))`) takes a run that is too
  short when it is closer in size than every run that fits, and the rest from another run: the
  request is split although one run holds it all. On fresh allocators of 9 pages, all handed out by
  allocate(9), allocate(3) is tried on three sets of free runs: the closest run too short (before or
  after the run that fits), and the closest run the best fit too, which tells this rule apart from
  "the smallest run, whether it holds n or not".
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.holes import allocate_after_frees, runs_text
from minisgl_edu.grading.core import Mistake

CLOSEST = (
    "best fit is the smallest run that holds all n pages, not the run closest in size to n: a run shorter "
    "than n is never a fit while another run holds all n"
)

# (the blocks of pages freed, the pages allocate(3) takes by the closest-size rule, by best fit)
_SCENES = (
    ([[0, 1], [3, 4, 5, 6, 7]], [0, 1, 3], [3, 4, 5]),  # runs (0, 2), (3, 5)
    ([[0, 1, 2, 3, 4], [6, 7]], [0, 6, 7], [0, 1, 2]),  # runs (0, 5), (6, 2)
    ([[0], [2, 3, 4, 5]], [2, 3, 4], [2, 3, 4]),  # runs (0, 1), (2, 4): closest and best fit agree
)


def closest_size_probe(cls, seen: str) -> Optional[Mistake]:
    """When allocate(3) takes the pages of the closest-size rule on all three scenes, the Mistake that
    says the answer picks the run closest in size to n instead of the smallest that holds n (`seen`: what
    the case saw); None otherwise."""
    got = [allocate_after_frees(cls, frees, 3) for frees, _, _ in _SCENES]
    if got != [closest for _, closest, _ in _SCENES]:
        return None
    (short, _, best_short), (long, _, best_long), (agree, _, _) = _SCENES
    return Mistake(
        f"{seen}. On fresh allocators of 9 pages, all handed out by allocate(9), allocate(3) with free runs "
        f"{runs_text(short)} gives {got[0]}, and with free runs {runs_text(long)} gives {got[1]}: each time you start "
        f"with the run whose length is closest to 3, a run too short to hold 3 pages, then take the rest from "
        f"another run. Best fit takes {best_short} and {best_long}: one run, the smallest that holds all 3 "
        f"(with free runs {runs_text(agree)}, where the closest run holds 3, you take {got[2]}, as best fit does)",
        CLOSEST,
    )
