"""Exercise 4 — a new allocator with one id too many: the id `num_pages` on its free list.

Where this sits: a free list built by a range one too long (`range(num_pages, -1, -1)`, a reversed
range started at num_pages, not num_pages - 1) holds num_pages + 1 ids. Every case then sees some
later symptom (one page too many after allocate(0), after a free, after a refused free, a pool that
never runs out on time), each with the hint of another mistake. `fresh` builds each case's allocator
and names the cause first, when a new allocator counts num_pages + 1 free ids and hands out the id
num_pages itself: ids are 0 .. num_pages - 1, and num_pages is no page (in the pool it is the dummy).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

EXTRA_ID = (
    "a new allocator has exactly num_pages free ids, 0 .. num_pages - 1: range(num_pages) holds them, and "
    "counting down, range(num_pages - 1, -1, -1) starts at num_pages - 1, not at num_pages (the id num_pages "
    "is no page)"
)


def extra_id(cls, num_pages: int) -> Optional[Mistake]:
    """On a fresh `cls(num_pages)`: when num_free reads num_pages + 1 and allocate(num_pages + 1) hands out
    every id 0 .. num_pages, the id num_pages among them, the Mistake that says so; None otherwise (other
    checks name other counts)."""
    try:
        b = cls(num_pages)
        if getattr(b, "num_free", None) != num_pages + 1:
            return None
        pages = b.allocate(num_pages + 1)
        if not isinstance(pages, list) or sorted(pages) != list(range(num_pages + 1)):
            return None
    except Exception:
        return None
    ids = f"the page ids are 0 .. {num_pages - 1}" if num_pages > 1 else f"the only page id is {num_pages - 1}"
    return Mistake(
        f"a new allocator of {num_pages} page{'s' if num_pages != 1 else ''} has num_free == {num_pages + 1}, one "
        f"too many: allocate({num_pages + 1}) on a new one hands out {sorted(pages)}, the id {num_pages} included, "
        f"but {ids}: your free list starts with one id too many, {num_pages}, which is no page",
        EXTRA_ID,
    )


def fresh(cls, num_pages: int):
    """A new `cls(num_pages)` for a case or a scene. Its num_free is read as it is (no side effect, so a
    class whose state is shared sees nothing more): only when it reads num_pages + 1 do other fresh
    allocators show whether the id num_pages is on the free list, and that Mistake is raised before the
    case's own checks see a later symptom of it."""
    a = cls(num_pages)
    try:
        count = a.num_free
    except Exception:  # the case's own reads name a num_free that raises
        return a
    if count == num_pages + 1 and (mistake := extra_id(cls, num_pages)) is not None:
        raise mistake
    return a
