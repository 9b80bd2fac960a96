"""Exercise 5's probe for an admission count that credits every request with the NEW request's held
pages, called by edges.case_memory_margins when a request that fits exactly is refused.

try_admit sums, over the admitted requests and the new one, each request's whole run in pages less
the pages THAT request holds. A slip of the loop variable, `cache.held_pages(req)` inside
`for r in admitted + [req]`, takes the new request's held pages off every request's need instead:
a running request then gets no credit for the pages it holds when the new one holds none (the count
is too high and a request that fits is refused), and too much credit when the new one holds more
(too low: a request is admitted that cannot finish).

The probe asks how many pages to spare the answer wants before it admits request 1, in two scenes
that edges.py builds: running request 0 holds 3 pages and request 1 none (the slip wants 3 pages to
spare: request 0's 3 held pages are not subtracted); request 0 holds 5 pages and request 1 holds 4
of a cached prefix (the slip wants 1: request 0 got 4 off, request 1's, not its own 5). Only an
answer that wants 3 then 1 is named. A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.grading.schedule.checks import admits

NEW_REQUESTS_HELD_PAGES = (
    "each request's own held pages come off its own need: in the sum over admitted + [req], subtract "
    "cache.held_pages(r) for each r, not cache.held_pages(req), the new request's, for every one. Each request "
    "holds its own pages (its prompt so far, its cached prefix), so pages_for(len(r.input_ids) + "
    "r.max_new_tokens, page_size) - cache.held_pages(r) is what r may still take"
)


def _spare_wanted(fn, scene: Callable, exact: int) -> Optional[int]:
    """The fewest pages to spare (0 to 5) with which `fn` admits request 1, whose run fits exactly at
    max_tokens=`exact` (a page is 4 tokens); None if it admits none of them."""
    for spare in range(6):
        s, _, req = scene(exact - 4 * spare)
        if admits(fn, s, req):
            return spare
    return None


def credits_the_new_requests_pages(fn, plain: Callable, prefixed: Callable) -> bool:
    """True when `fn` wants 3 pages to spare in `plain` (edges._margins: request 0 holds 3, request 1
    none) and 1 in `prefixed` (edges._tight: request 0 holds 5, request 1 a prefix of 4)."""
    try:
        return _spare_wanted(fn, plain, 499) == 3 and _spare_wanted(fn, prefixed, 615) == 1
    except Exception:
        return False
