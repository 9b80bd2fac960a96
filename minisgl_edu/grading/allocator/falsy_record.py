"""Exercise 4 — a record of the pages in use whose value 0 reads as "not in use", for free()'s checks.

Where this sits: the base part's cases (base.py) free pages in use, and frees.py's `refused_in_use`
asks why the answer's own check refused them. The probe here runs the answer once more on a fresh
allocator, to name one cause only when it shows: the pages of the first allocate() are refused
while those of every later one are accepted, as when each page records the number of the allocation
it came from, counted from 0, and free() tests that number for truth (`if not self.owner.get(p)`).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

FALSY_RECORD = (
    "a record whose value is 0 is still a record: the first allocation is number 0 (and page 0 is a real page), "
    "and `if not self.owner.get(p)` reads 0 as 'not in use'; test whether the page is recorded "
    "(p in self.owner), not whether its value is true"
)


def _first_refused(cls) -> Optional[tuple[list[int], list[int], list[int]]]:
    """On a fresh allocator of 4 pages: allocate(2), allocate(1), allocate(1). When free() of the second
    and then of the third allocation is accepted (so not only the latest allocation counts as in use), yet
    free() of each page of the first, not all of them page 0, is refused with ValueError, and allocate()
    marks in use no page it did not return: the three allocations. None when the answer does not show that."""
    try:
        a = cls(4)
        first, second, third = list(a.allocate(2)), list(a.allocate(1)), list(a.allocate(1))
        a.free(second)
        a.free(third)
    except Exception:
        return None
    for p in first:
        try:
            a.free([p])
        except ValueError:
            continue
        except Exception:
            return None
        return None
    if not any(p != 0 for p in first):  # page 0 refused alone: another mistake (`if not p`)
        return None
    return (first, second, third) if _marks_what_it_returns(cls) else None


def _marks_what_it_returns(cls) -> bool:
    """On a fresh allocator of 4 pages after allocate(2): free() of each page it did not hand out is refused
    with ValueError. Otherwise allocate() marked other pages in use than it returned, which another check
    names (frees.py: marked_other_pages)."""
    try:
        a = cls(4)
        handed = list(a.allocate(2))
    except Exception:
        return False
    for p in range(4):
        if p in handed:
            continue
        try:
            a.free([p])
        except ValueError:
            continue
        except Exception:
            return False
        return False
    return True


def first_allocation_refused(cls, what: str, e: ValueError) -> Optional[Mistake]:
    """The Mistake for freeing pages in use (`what` says which) that raised `e`, when a fresh allocator
    shows that only the first allocation's pages are refused; None otherwise."""
    found = _first_refused(cls)
    if found is None:
        return None
    first, second, third = found
    return Mistake(
        f"freeing {what} raised ValueError ({e}), yet those pages are in use. On a fresh allocator of 4 pages, "
        f"after allocate(2) gave {first!r}, allocate(1) {second!r} and allocate(1) {third!r}, free() of the "
        f"second and of the third allocation is accepted, but free() of each page of the first, {first!r}, is "
        "refused: your free() reads the pages of the first allocation as not in use. Its record for them is 0 "
        "(the first allocation's number, counted from 0), and your check takes 0 for 'no record'",
        FALSY_RECORD,
    )
