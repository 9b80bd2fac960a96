"""Exercise 4, stretch — a probe for one slip of the contiguous allocator's free(), used by
contiguous_probes.good_free_failed when a free() of pages in use raised KeyError.

* `left_pop_probe`: a freed page p that joins the free run ending just before it finds that run's
  start in the index of runs by their end; the run's length must then come out of the index by start
  under that start. An answer that takes it out under p (`by_start.pop(p)` for `by_start.pop(start)`)
  looks up a page that was in use, where no run starts: KeyError, with the freed page as the key. On a
  fresh allocator of 6 pages, all handed out by allocate(6), page 3 freed after page 4 joins the run
  after it, but freed after page 2 and then page 1 (the run (1, 2), made by joining runs on the right
  only) it raises KeyError: 3, neither the run's start (1) nor its length (2), which an index of runs by
  their end that holds lengths would have looked up.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_replay import replay
from minisgl_edu.grading.core import Mistake

LEFT_POP = (
    "when a freed page p joins the free run that ends just before it, take that run's length out under the "
    "run's own start (start = by_end.pop(p), then by_start.pop(start)), not under p: no run starts at p, a page "
    "that was in use"
)


def _key_raised(cls, first: list[int]) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): free([p]) for each page p of `first`,
    one call each, then free([3]). The key of the KeyError free([3]) raised, or the runs (or what else
    replay saw) when it raised none."""
    keys: list[object] = []

    def step(a) -> None:
        try:
            a.free([3])
        except KeyError as e:
            keys.append(e.args[0] if e.args else None)
            raise

    def setup(a) -> bool:
        for p in first:
            a.free([p])
        return True

    got = replay(cls, setup, step)
    return ("key", keys[0]) if keys else got


def left_pop_probe(cls, seen: str) -> Optional[Mistake]:
    """When page 3 joins the run (4, 1) after it, but freed after the run (1, 2) before it raises KeyError
    with the key 3, the freed page, the Mistake that says the left run's length was looked up under the
    freed page instead of the run's start (`seen`: what the case saw); None otherwise."""
    if _key_raised(cls, [4]) != [(3, 2)] or _key_raised(cls, [2, 1]) != ("key", 3):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out by allocate(6): free([4]) then free([3]) gives "
        "runs [(3, 2)], but free([2]), free([1]) then free([3]) raises KeyError: 3, the freed page itself. "
        "Page 3 joins the free run (1, 2) that ends just before it, a run recorded under its start, 1, which "
        "your index of runs by their end gives you; yet your free() looks the run up under page 3, where no "
        "run starts (page 3 was in use): use the start you just read, not p",
        LEFT_POP,
    )
