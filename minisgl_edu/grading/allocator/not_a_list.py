"""Exercise 4 — an allocate() that hands its pages back as a set (or a tuple, ...), for the base part (base.py).

Where this sits: every call to allocate in the base cases goes through `_allocate` (base.py), which
checks that allocate(n) returned a list. When it did not, the probe here runs the answer again on a
fresh allocator, to name the return type only when that is the whole mistake: what allocate(2)
returned holds 2 distinct page ids and num_free fell by 2, so the right pages were taken and only the
container is wrong, as `return set(pages)` ("distinct ids") does.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

NOT_A_LIST = (
    "allocate(n) returns a list of the page ids it took, in the order taken, not a {kind}: the cache manager "
    "writes that list into the request's page-table row position by position{why}; return the list itself "
    "(return pages)"
)

# Why a set in particular breaks the caller: the ids are distinct already, the order is what it loses.
SET_WHY = ", and a set has no order (the ids are distinct already, a set adds nothing)"


def _taken(cls, num_pages: int, n: int) -> Optional[type]:
    """The type allocate(n) returned on a fresh `cls(num_pages)` when it is not a list yet holds n distinct
    page ids of range(num_pages) and num_free fell by n: the pages were taken right. None otherwise."""
    try:
        a = cls(num_pages)
        before = a.num_free
        got = a.allocate(n)
        after = a.num_free
        kind = type(got)
        ids = list(got)
    except Exception:
        return None
    if isinstance(got, list) or after != before - n or len(set(ids)) != n:
        return None
    if not all(isinstance(p, int) and 0 <= p < num_pages for p in ids):
        return None
    return kind


def not_a_list(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for an allocate that returned no list (`seen`: what the case saw), when a fresh allocator
    of 4 pages shows allocate(2) taking 2 pages right and handing them back in another type; None otherwise."""
    kind = _taken(cls, 4, 2)
    if kind is None:
        return None
    name = kind.__name__
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, allocate(2) took 2 pages (num_free fell from 4 to 2) and "
        f"returned them as a {name}, not a list",
        NOT_A_LIST.format(kind=name, why=SET_WHY if issubclass(kind, (set, frozenset)) else ""),
    )
