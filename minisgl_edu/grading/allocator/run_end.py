"""Exercise 4, stretch — a free() that counts the page just after a free run as free.

Where this sits: an answer that keeps only the free runs tests whether a page is in use by asking
whether it lies in no free run. With the run's end taken as inclusive (`start <= p <= start + length`)
the page start + length, the first page after the run, reads as free: free() refuses it with its own
ValueError ("not in use") whenever a free run ends just before it, though it is in use. The cases see
that as their own check refusing a good call (contiguous.py, scenes.py); `run_end_probe` runs the
answer once more on fresh allocators of 3 pages to name it only when that is what it does.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

RUN_END = (
    "a free run (start, length) covers the pages start .. start + length - 1: test a page with "
    "start <= p < start + length, so the page at start + length, the first page after the run, counts as in "
    "use, and free() takes it back"
)


def _second_free(cls, first: int) -> Optional[bool]:
    """On a fresh allocator of 3 pages, each page handed out by allocate(1) (pages 0, 1, 2): free([first])
    (none when `first` is None), then free([1]). True if free([1]) is accepted, False if refused with
    ValueError, None if anything else went wrong."""
    try:
        a = cls(3)
        if [list(a.allocate(1)) for _ in range(3)] != [[0], [1], [2]]:
            return None
        if first is not None:
            a.free([first])
    except Exception:
        return None
    try:
        a.free([1])
    except ValueError:
        return False
    except Exception:
        return None
    return True


def run_end_probe(cls, seen: str, pages: list[int] = (), runs: list[tuple[int, int]] = ()) -> Optional[Mistake]:
    """The Mistake for a free() of pages in use refused with ValueError (`seen`: what the case saw), when
    fresh allocators of 3 pages show why: free([1]) is accepted alone and after free([2]), but refused after
    free([0]), which leaves the free run (0, 1) ending just before page 1. `pages` and `runs` (the call and
    the free runs before it), when given, name the page of the call that sits right after a free run."""
    if _second_free(cls, None) is not True or _second_free(cls, 2) is not True or _second_free(cls, 0) is not False:
        return None
    after = [(p, (s, n)) for p in pages for s, n in runs if s + n == p]
    named = ""
    if after:
        p, (s, n) = after[0]
        named = f" Page {p} of that call is in use and sits right after the free run ({s}, {n}): {s} + {n} == {p}."
    return Mistake(
        f"{seen}.{named} On a fresh allocator of 3 pages, each page handed out by allocate(1): free([1]) is "
        "accepted, and after free([2]) too, but after free([0]), which leaves the free run (0, 1), free([1]) is "
        "refused: your free() counts page 1, in use, as free because it is start + length of that run, the first "
        "page after it, not one of its pages",
        RUN_END,
    )
