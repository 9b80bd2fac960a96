"""Exercise 4 — an allocate() that takes a request's pages from one kind only, for the base part (base.py).

Where this sits: every call to allocate in the base cases goes through `_allocate` (base.py). When
allocate(n) raised OutOfPages with n <= num_free (and a fresh allocator takes an exact fit, so that
is not the cause), the probe here runs the answer again on fresh allocators, to name one cause only
when it shows: with 4 pages free, 2 given back by free() and 2 never handed out, two allocate(2)
calls each take the 2 pages of one kind, yet allocate(3) is refused. The answer keeps never-used ids
and freed ids apart (a counter for fresh ids and a list of freed ones, say) and serves a request from
one of them only, so a request larger than either part is refused although enough pages are free.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.kvcache.allocator import OutOfPages


def _freed_two(cls) -> tuple[object, list[int]]:
    """A fresh `cls(4)` after allocate(2) and free() of those 2 pages, and the 2 pages."""
    a = cls(4)
    freed = list(a.allocate(2))
    a.free(list(freed))
    return a, freed


def _one_kind_only(cls) -> Optional[tuple[list[int], list[int], list[int], list[int]]]:
    """(freed, fresh, first, second) when, on 4 free pages (`freed` given back, `fresh` never handed out),
    allocate(2) then allocate(2) gave `first` and `second`, the 2 pages of one kind each, while on another
    allocator in the same state allocate(3) raised OutOfPages. None when the answer does not show that."""
    try:
        a, freed = _freed_two(cls)
        fresh = sorted(set(range(4)) - set(freed))
        if len(fresh) != 2 or a.num_free != 4:
            return None
        first, second = list(a.allocate(2)), list(a.allocate(2))
        if sorted([sorted(first), sorted(second)]) != sorted([sorted(freed), fresh]):
            return None
        b, again = _freed_two(cls)
        if sorted(again) != sorted(freed):
            return None
        b.allocate(3)
    except OutOfPages:
        return freed, fresh, first, second
    except Exception:
        return None
    return None


def one_kind_only(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for allocate(n) refused with n <= num_free (`seen`: what the case saw), when fresh
    allocators show allocate serving a request from the freed pages or the never-used ones, never both;
    None otherwise."""
    found = _one_kind_only(cls)
    if found is None:
        return None
    freed, fresh, first, second = found
    kind = "never handed out" if sorted(first) == fresh else "given back"
    other = "given back" if kind == "never handed out" else "never handed out"
    return Mistake(
        f"{seen}. On a new allocator of 4 pages, allocate(2) gave {freed} and free({freed}) gave them back, so 4 "
        f"pages are free: {sorted(freed)} given back and {fresh} never handed out. allocate(2) then takes {first} "
        f"(the pages {kind}) and a further allocate(2) takes {second} (those {other}), but allocate(3) on the "
        "same 4 free pages raises OutOfPages: your allocate takes a request's pages from one kind only",
        f"your allocate hands out the pages {kind} first and those {other} only after, and never some of each in "
        "one call, so a request larger than either kind is refused although enough pages are free. A free page is "
        "free whether it was handed out before or not: allocate(n) takes any n free ids, mixing freed and "
        "never-used ones when it must (one free list holding every free page does that), and refuses only when "
        "n > num_free",
    )
