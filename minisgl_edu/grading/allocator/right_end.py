"""Exercise 4, stretch — a probe for one slip of the contiguous allocator's free(), used by
contiguous_probes.good_free_failed and the stretch's generated scenes when a free() of pages in use
raised IndexError: the twin, on the right, of left_wrap.py.

* `right_end_probe`: a freed page p joins the free run that starts just after it only when there is a
  free run after it. An answer that keeps the free runs as a list sorted by start and finds p's place
  with bisect (i: the first run after p) guards the left neighbour, runs[i - 1], with `i > 0`, but reads
  the right one, runs[i], with no `i < len(runs)`. While a free run lies after p nothing shows; when p
  lies after every free run (the pool full, or only runs below p free) i == len(runs), and runs[i] is
  past the end: IndexError. On a fresh allocator of 6 pages: allocate(4) then free([2]) (the run (4, 2)
  after it) gives the right runs, but allocate(6) then free([3]) (no free run at all) fails, and so does
  free([5]) after allocate(4), free([0]), allocate(2) (the only free run, (0, 1), below it).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

RIGHT_END = (
    "a page that lies after every free run (the last page of a full pool, say) has no right neighbour: "
    "runs[i] with i == len(runs) is past the end of your list. Test i < len(runs) before reading the run "
    "after it, as you test i > 0 before reading the one before it"
)


def _free_last(cls, setup: list, page: int) -> object:
    """On a fresh allocator of 6 pages: each step of `setup`, an allocate(n) that must give `pages` as
    ("allocate", n, pages) or a free as ("free", pages), then free([page]). The runs after it, 'raised
    <exception name>' when it raised, or None when a step of the set-up went otherwise."""
    try:
        a = cls(6)
        for step in setup:
            if step[0] == "allocate" and sorted(a.allocate(step[1])) != step[2]:
                return None
            if step[0] == "free":
                a.free(step[1])
    except Exception:
        return None
    try:
        a.free([page])
        return [tuple(r) for r in a.runs]
    except Exception as e:
        return f"raised {type(e).__name__}"


FIRST_FOUR = ("allocate", 4, [0, 1, 2, 3])  # the run (4, 2) stays free, above every page handed out


def right_end_probe(cls, seen: str) -> Optional[Mistake]:
    """When freeing a page goes right while a free run lies after it, but freeing a page that lies after
    every free run raises IndexError (the pool full, or only a run below it free), the Mistake that says
    the run after the page was read past the end of the runs (`seen`: what the case saw); None otherwise."""
    if _free_last(cls, [FIRST_FOUR], 2) != [(2, 1), (4, 2)]:
        return None  # a page with a free run after it goes wrong too: another mistake
    full = _free_last(cls, [("allocate", 6, list(range(6)))], 3)
    below = _free_last(cls, [FIRST_FOUR, ("free", [0]), ("allocate", 2, [4, 5])], 5)
    if "raised IndexError" not in (full, below):
        return None

    def did(got: object) -> str:
        return got if isinstance(got, str) else f"gives {got}"

    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, allocate(4) then free([2]) gives runs [(2, 1), (4, 2)], the "
        f"run (4, 2) after page 2; but allocate(6) then free([3]), with no free run at all, {did(full)}, expected "
        "[(3, 1)], and allocate(4), free([0]), allocate(2) (pages 4 and 5), then free([5]), with the only free "
        f"run (0, 1) below it, {did(below)}, expected [(0, 1), (5, 1)]. A page with a free run after it is freed "
        "right; one that lies after every free run has no run after it, yet your free() read the run just "
        "after it, past the end of your list",
        RIGHT_END,
    )
