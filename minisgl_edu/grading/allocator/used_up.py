"""Exercise 4 — an allocate() whose pages were used up before it returned them, for the base part (base.py).

Where this sits: every call to allocate in the base cases goes through `_allocate` (base.py), which
checks that allocate(n) returned n pages. When it returned [] for some n > 0, the probe here runs the
answer again on fresh allocators, to name one cause only when it shows: the pages did leave the free
list (num_free fell by n) and free() accepts exactly n of them as in use, yet the list returned is
empty. The pages were taken and marked, then read a second time for the return: a generator such as
`(self.free_list.pop() for _ in range(n))` is used up by `self.in_use.update(pages)`, so the
`list(pages)` after it is [].
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

USED_UP = (
    "allocate(n) took n pages and marked them in use, but returned an empty list: the pages were read twice. A "
    "generator or iterator, e.g. (self.free_list.pop() for _ in range(n)), gives its items once, so "
    "in_use.update(pages) used it up and list(pages) after it is []: build a list ([... for _ in range(n)]), "
    "then mark and return that same list"
)


def _in_use_after(cls, num_pages: int, n: int) -> Optional[list[int]]:
    """The pages free() accepts as in use after allocate(n) on a fresh `cls(num_pages)` returned [] and
    num_free fell by n: each page is tried alone, on an allocator of its own, so one accepted free changes
    nothing for the next. None when allocate(n) does not behave so, or anything raises other than
    ValueError."""
    accepted = []
    for p in range(num_pages):
        try:
            a = cls(num_pages)
            before = a.num_free
            got = a.allocate(n)
            if got != [] or a.num_free != before - n:
                return None
            a.free([p])
        except ValueError:
            continue  # free() refused p: not in use
        except Exception:
            return None
        accepted.append(p)
    return accepted


def used_up(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for an allocate that returned too few pages (`seen`: what the case saw), when a fresh
    allocator of 4 pages shows allocate(2) taking and marking 2 pages yet returning []; None otherwise."""
    marked = _in_use_after(cls, 4, 2)
    if marked is None or len(marked) != 2:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, allocate(2) returned [], yet num_free fell from 4 to 2 and "
        f"free() accepts pages {marked} as in use: your allocate took 2 pages and marked them, then returned "
        "an empty list, so the caller never gets its pages and they are lost",
        USED_UP,
    )
