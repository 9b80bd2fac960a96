"""Exercise 4 — pages in use kept as a list, and free() removing page p with `del in_use[p]`, for free()'s checks.

Where this sits: frees.py's `refused_in_use` asks why the answer's own check refused pages in use, and
base.py's `case_refused_midway` why pages went missing after a refused call. `del in_use[p]` deletes the
entry at POSITION p of the list, which is page p only while the list reads [0, 1, 2, ...]: once a page
has left, the entry at position p is another page. The probe here names that only when a fresh
allocator shows it: after free([0]), free([1]) takes page 2 out of use instead of page 1, so free([2])
is refused while free([1]) is accepted a second time.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

BY_POSITION = (
    "`del self.in_use[p]` deletes the entry at position p of the list, not page p: once an earlier page has "
    "left the list, position p holds another page. Take page p out by its value (self.in_use.remove(p)), or "
    "keep the pages in use in a set"
)


def _accepted(a, pages: list[int]) -> Optional[bool]:
    """True when a.free(pages) returned, False when it raised ValueError, None for any other exception."""
    try:
        a.free(pages)
    except ValueError:
        return False
    except Exception:
        return None
    return True


def _deletes_by_position(cls) -> bool:
    """On a fresh allocator of 5 pages: allocate(4) gives [0, 1, 2, 3], free([0]) and free([1]) are accepted,
    then free([2]) is refused though page 2 is in use, while free([1]) a second time is accepted: the entry
    free([1]) deleted was at position 1, which held page 2 once page 0 had left."""
    try:
        a = cls(5)
        if list(a.allocate(4)) != [0, 1, 2, 3]:
            return False
    except Exception:
        return False
    return [_accepted(a, [0]), _accepted(a, [1]), _accepted(a, [2]), _accepted(a, [1])] == [True, True, False, True]


def by_position(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for pages in use refused or lost (`seen`: what the case saw), when a fresh allocator shows
    that free() takes out of use the page at position p of its list instead of page p; None otherwise."""
    if not _deletes_by_position(cls):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 5 pages, after allocate(4) gave [0, 1, 2, 3], free([0]) and free([1]) are "
        "accepted, but then free([2]) is refused though page 2 is in use, and free([1]) is accepted a second "
        "time: your free([1]) took page 2 out of use, the page at position 1 of your list once page 0 had "
        "left it, not page 1",
        BY_POSITION,
    )
