"""Exercise 5's probe for an admission count that reads a request's held pages from its computed
tokens, pages_for(r.cached_len, page_size), instead of cache.held_pages(r); called by
edges.case_memory_margins when the second of two new requests, which fits exactly, is refused.

Between steps the two agree. Within one call they do not: a request admitted earlier in the same
call already holds the pages reserved for its first chunk, while its cached_len has not moved yet
(it moves when the chunk has run). Those pages are then counted twice, gone from num_available and
still to take, and the next request is refused although it fits.

The probe asks how many pages to spare the answer wants before it admits request 1 beside request 0,
both new, in the same call: with request 0's prompt of 6 tokens (a chunk on 2 pages) and of 13
tokens (4 pages). Only an answer that wants exactly the pages of request 0's chunk, 2 then 4, and
that admits an exact fit between steps beside a running request whose cached_len (9) ends inside a
page, is named: a count of each request's remaining tokens in pages, pages_for(final - cached_len),
is as wrong in the same call but refuses that control. A probe that raises counts as "not this
mistake".
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import admits, sched

HELD_FROM_CACHED_LEN = (
    "ask the cache what each request holds, cache.held_pages(r), not pages_for(r.cached_len, page_size): a "
    "request admitted earlier in the same call already holds the pages reserved for its chunk, while its "
    "cached_len moves only once that chunk has run"
)


def two_new(first_prompt: int, spare: int):
    """Requests 0 and 1, both new, on 256 free pages: request 0's run takes 127 pages (508 tokens),
    request 1's 129 (6 + 510 tokens) less `spare` pages; the budget (64) prefills both at once."""
    s = sched()
    first = waiting(s, 0, first_prompt, max_tokens=508 - first_prompt)
    second = waiting(s, 1, 6, max_tokens=510 - 4 * spare)
    assert s.cache.num_available == 256, "setup: the pages changed"
    return s, first, second


def _spare_wanted(fn, first_prompt: int) -> Optional[int]:
    """The fewest pages to spare (0 to 6) with which `fn` admits request 1; None if none."""
    for spare in range(7):
        s, _, second = two_new(first_prompt, spare)
        if admits(fn, s, second):
            return spare
    return None


def _between_steps_fits(fn) -> bool:
    """Request 0 runs (9 + 505 = 514 tokens, 129 pages, 3 held: 126 to come) and request 1 waits
    (6 + 502 = 508 tokens, 127 pages): 253, exactly the 253 available. Admitted?"""
    s = sched()
    decoding(s, 0, 9, max_tokens=505)
    second = waiting(s, 1, 6, max_tokens=502)
    assert s.cache.num_available == 253, "setup: the pages changed"
    return admits(fn, s, second)


def counts_held_from_cached_len(fn) -> bool:
    """True when `fn` wants as many pages to spare as request 0's chunk holds, 2 for a 6-token
    prompt and 4 for a 13-token one, and admits the exact fit between steps."""
    try:
        return _spare_wanted(fn, 6) == 2 and _spare_wanted(fn, 13) == 4 and _between_steps_fits(fn)
    except Exception:
        return False
