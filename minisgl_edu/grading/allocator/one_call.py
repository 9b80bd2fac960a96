"""Exercise 4 — the pages of one allocate(n) call, for the base part: what a generated scene reports of
them, and a probe for one slip that repeats a page within a single call.

Where this sits: base.py's `_allocate` (every hand case's allocate), frees.py's `refused_in_use` (the
engine case, where the slip shows as the answer's own free() refusing a page) and the generated scenes
(scenes.py's `play`, through `pages_seen`) call `one_call_twice` when a page is handed out twice.

* `one_call_twice`: an answer that finds the pages of allocate(n) one at a time in a loop or comprehension
  (`used.index(False)`, `min(free)`, the first entry of a free list it does not pop) and marks them in use
  only after it finds the same lowest free page at every step: allocate(n) returns that page n times. On a
  new allocator of 6 pages allocate(1) gives one page, but allocate(4) gives one page more than once, with
  nothing held before it and nothing freed: no earlier call can have put that page on a free list twice.
* `pages_seen`: the base part's view of allocate(n)'s pages in a scene: "n free pages" when the contract
  holds, else what is wrong with them; a page twice in the call is first asked of `one_call_twice`.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.core import Mistake

ONE_CALL_TWICE = (
    "one allocate(n) hands out n different pages: if you find the free pages one at a time (a loop or "
    "comprehension over used.index(False), min(free), ...) and mark them in use only after it, every step finds "
    "the same page. Mark each page in use (or take it off the free list) as you find it, or take n distinct "
    "free pages at once"
)


def _first_call(cls, n: int) -> Optional[list]:
    """What allocate(n) returned on a new allocator of 6 pages; None when it raised or gave no list."""
    try:
        got = cls(6).allocate(n)
    except Exception:
        return None
    return got if isinstance(got, list) else None


def one_call_twice(cls, seen: str) -> Optional[Mistake]:
    """When a new allocator of 6 pages gives one page for allocate(1), but the same page more than once in the
    four of allocate(4), the Mistake that says one call's pages were found before any was marked in use
    (`seen`: what the case saw); None otherwise."""
    one, four = _first_call(cls, 1), _first_call(cls, 4)
    if one is None or len(one) != 1 or four is None or len(four) != 4 or len(set(four)) == 4:
        return None
    page = next(p for p in four if four.count(p) > 1)
    return Mistake(
        f"{seen}. On a new allocator of 6 pages, allocate(4) returned {four!r}: page {page!r} "
        f"{four.count(page)} times in ONE call, with nothing handed out or freed before it. Each step of that "
        "call found the same free page, because none was marked in use until the call had found them all; two "
        "requests given one page write over each other's tokens, and the second free of it is refused",
        ONE_CALL_TWICE,
    )


def no_page_twice(a, n: int, pages: list) -> None:
    """For base.py's `_allocate`: when allocate(n) of allocator `a` returned `pages` with a page in it twice
    and a new allocator shows the same in its first call, raise the Mistake that names it."""
    twice = [p for p in pages if pages.count(p) > 1]
    if twice and (
        mistake := one_call_twice(type(a), f"allocate({n}) returned {pages!r}: page {twice[0]!r} more than once")
    ):
        raise mistake


def pages_seen(cls: Any, got: Any, n: int, books: Any) -> tuple[str, bool]:
    """The base part's view of allocate(n)'s pages `got` (of an allocator of class `cls`; `books`: the
    scene's record of the pages held): "n free pages" when the contract holds, else what is wrong with
    them; and whether they are good. A page twice in the call raises `one_call_twice`'s Mistake when
    a new allocator shows it."""
    if not isinstance(got, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in got):
        return f"{got!r}, not a list of page ids", False
    if len(got) != n:
        return f"{got}: {len(got)} pages for allocate({n})", False
    outside = [p for p in got if not 0 <= p < books.num_pages]
    if outside:
        return f"{got}: page {outside[0]} is not a page id (ids are 0..{books.num_pages - 1})", False
    twice = [p for p in got if got.count(p) > 1]
    if twice:
        if (mistake := one_call_twice(cls, f"allocate({n}) gave {got}: page {twice[0]} more than once")) is not None:
            raise mistake
        return f"{got}: page {twice[0]} twice", False
    held = sorted(set(got) & books.holding())
    if held:
        return f"{got}: page {held[0]} is still held by an earlier allocation", False
    return "[]" if n == 0 else f"{n} free page{'s' if n > 1 else ''}", True
