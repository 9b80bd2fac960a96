"""Exercise 4 — a probe for one way to refuse a bad free(), used by frees._must_refuse when
free([p, p]) raised KeyError instead of ValueError.

* `checked_a_copy`: free() checks each page against a copy of the pages in use taken before its loop
  (`used = set(self.in_use)`), and frees each page from the real set as it goes. The second p passes
  the check (the copy still holds it) and `self.in_use.remove(p)` raises KeyError. Told apart from an
  answer that checks every page before it frees any (the same KeyError on [p, p]): on a fresh
  allocator of 4 pages with 2 handed out, free([first, a page never handed out]) frees the first page
  before it refuses the second, so the checks and the frees go one page at a time, and a check made
  after p was freed still found p: it looked at a set the loop does not change.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

CHECKED_A_COPY = (
    "check each page against the pages in use as they are now, not against a copy of the pages in use taken "
    "before the loop: the copy still holds a page the loop already freed, so a page listed twice passes"
)


def _frees_one_at_a_time(cls) -> Optional[tuple[int, int]]:
    """On a fresh allocator of 4 pages, allocate(2) then free([first, never]) with `never` a page not
    handed out: (first, never) when that raised ValueError after giving the first page back (num_free
    went from 2 to 3), None otherwise."""
    try:
        a = cls(4)
        got = a.allocate(2)
        first, never = got[0], min(set(range(4)) - set(got))
        a.free([first, never])
    except ValueError:
        return (first, never) if a.num_free == 3 else None
    except Exception:
        return None
    return None


def checked_a_copy(cls, pages: list[int], seen: str, e: Exception) -> Optional[Mistake]:
    """When free(pages), a page listed twice, raised KeyError (`e`) and the probe shows the answer checks
    and frees one page at a time, the Mistake that says its checks read a copy taken before the loop
    (`seen`: what the case saw); None otherwise."""
    if not isinstance(e, KeyError) or len(set(pages)) == len(pages):
        return None
    probe = _frees_one_at_a_time(cls)
    if probe is None:
        return None
    first, never = probe
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, after allocate(2), free([{first}, {never}]) gives page {first} "
        f"back and then refuses page {never}: you check and free one page at a time. So the second {pages[0]} was "
        f"checked after the first was freed, and the check still found it in use: it read a copy of the pages in "
        f"use taken before the loop, which the loop does not change, and the second remove raised KeyError",
        CHECKED_A_COPY,
    )
