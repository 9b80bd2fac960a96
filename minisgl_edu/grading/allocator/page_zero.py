"""Exercise 4 — a free() whose range check leaves out page 0, for the base part's frees of pages in use.

Where this sits: frees.py's `refused_in_use` asks why the answer's own check refused pages in use, and
base.py's refused-midway case asks why pages stay lost. One answer tests a page id with `0 < p <
num_pages` (or `if not p`), so page 0, a real page and the first one handed out, is refused as "not a
page id" and stays in use for good. `page_zero_refused` shows that on fresh allocators of 4 pages, all
handed out: free([0]) is refused with ValueError while free([1]), free([2]) and free([3]) are accepted.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

PAGE_ZERO = (
    "page ids run from 0 to num_pages - 1, and page 0 is a real page (the first one handed out): test "
    "0 <= p < num_pages, not 0 < p (nor `if not p`), which refuses page 0 although it is in use"
)


def _refusal(cls, page: int) -> Optional[str]:
    """On a fresh allocator of 4 pages, all handed out by allocate(4), free([page]): '' when accepted, the
    ValueError's text when refused with it, None when anything else happened."""
    try:
        a = cls(4)
        if sorted(a.allocate(4)) != [0, 1, 2, 3]:
            return None
        a.free([page])
    except ValueError as e:
        return str(e)
    except Exception:
        return None
    return ""


def page_zero_refused(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for pages in use that free() refused or lost (`seen`: what the case saw), when fresh
    allocators show that free() refuses page 0 alone: free([0]) raises ValueError while every other page,
    each freed on its own allocator, is accepted. None otherwise."""
    why = _refusal(cls, 0)
    if not why or any(_refusal(cls, p) != "" for p in (1, 2, 3)):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, all handed out by allocate(4), free([1]), free([2]) and "
        f"free([3]) are each accepted, but free([0]) of page 0, which is in use, was refused with ValueError "
        f"({why}) by your range check: ids run from 0 to num_pages - 1, so page 0 is a page like any other, "
        "and once refused it stays in use for good",
        PAGE_ZERO,
    )
