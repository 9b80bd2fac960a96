"""Exercise 4, stretch — a probe for one mistake of the contiguous allocator's books, used by the cases
of contiguous.py (and the generated scenes of scenes.py) when a good free() raised KeyError or left
other runs than the reference's.

* `exact_fit_end_probe`: an allocator that keeps its free runs twice, by their start and by their
  end, must take a run out of both when allocate() hands all of it out. An answer that deletes the
  run by its start and lets the rest of the run overwrite its end entry ("the end stays the same,
  only the start moves") has no rest to do that on an exact fit: the end entry stays behind, and a
  page freed just after that run finds a free run ending there that is in use. It then fails looking
  the run up by its start (KeyError) or merges with pages in use. On a fresh allocator of 6 pages,
  page 4 freed after free([2, 3]) joins that run, and after allocate(1) joins the rest (3, 1), but
  after allocate(2), which takes the run (2, 2) whole, it does not stand alone as (4, 1).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_replay import replay
from minisgl_edu.grading.core import Mistake

EXACT_FIT_END = (
    "a run that allocate() empties (an exact fit) has no rest to overwrite its entry in your index of runs by "
    "their end: delete that entry too, as you delete the run by its start, or a page freed just after the run "
    "finds a free run ending there that is all in use (and merges with it, or fails looking it up)"
)


def _free_4_after(cls, take: Optional[int]) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): free([2, 3]), then allocate(take)
    (none when `take` is None), then free([4]), page 4 just after the run (2, 2). The runs after it,
    'raised <exception name>', or None when the steps before free([4]) went otherwise than the contract's."""

    def setup(a) -> bool:
        a.free([2, 3])
        return take is None or sorted(a.allocate(take)) == list(range(2, 2 + take))

    return replay(cls, setup, lambda a: a.free([4]))


def exact_fit_end_probe(cls, seen: str) -> Optional[Mistake]:
    """When page 4 joins the run (2, 2) made by free() and the rest (3, 1) that allocate(1) leaves of it,
    but after allocate(2) takes that run whole it fails, or lists page 2 or 3 (in use) as free: the Mistake
    that says the end entry of a run an exact fit emptied stayed behind (`seen`: what the case saw)."""
    if _free_4_after(cls, None) != [(2, 3)] or _free_4_after(cls, 1) != [(3, 2)]:
        return None  # page 4 does not join a free run before it at all: another mistake
    got = _free_4_after(cls, 2)
    if got is None or got == [(4, 1)]:
        return None
    if isinstance(got, list) and not any(s <= p < s + n for s, n in got for p in (2, 3)):
        return None  # wrong, but not by joining the pages allocate(2) took
    said = got if isinstance(got, str) else f"gives {got}"
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out by allocate(6): after free([2, 3]), free([4]) "
        "gives runs [(2, 3)], and after free([2, 3]) and allocate(1), which leaves the rest (3, 1), free([4]) gives "
        f"[(3, 2)]; but after free([2, 3]) and allocate(2), which takes the run (2, 2) whole, free([4]) {said}, "
        "where the runs are [(4, 1)]: page 4 still finds a free run ending just before it, though allocate(2) "
        "handed all of it out. Your books keep the end of a run that an exact fit emptied",
        EXACT_FIT_END,
    )
