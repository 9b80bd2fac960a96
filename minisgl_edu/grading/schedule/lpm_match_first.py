"""Exercise 5's stretch: every waiting request is matched, and the order fixed, before the batch is built.

A match marks the cached prefix it finds as just used, so eviction (which takes the least recently
used cached pages) spares it. The order is therefore read before anything is reserved: a reserve in
this decision may evict cached pages, and a prefix it evicts would rank its request lower. Two
mistakes read the cache too late:

- matching the rest again after each admission (REMATCHED, for the case's eviction scene in lpm.py);
- serving the chunked requests first, their reserve included, and only then matching and sorting the
  new ones (`check_matched_before_the_chunk`).

The second check's scene, budget 16 and pages of 4 tokens: three 2-page prompts are cached, P (used
longest ago), then X, then Y; request 0 (20 tokens) has had a 16-token chunk, holds a row and 4
pages, and its last 4 tokens need one more page; no page is free (the rest of the pool is ballast),
so that reserve evicts a cached page. Request 1 (5 tokens, nothing cached) waits, then request 2 (P
plus 3 tokens: 2 cached pages). Matched first, P is used last and the reserve evicts X: the batch is
request 0's 4 tokens, then request 2's 3. Matched after the reserve, P is gone and request 1 goes
first. A control, the same scene with free pages (the reserve evicts nothing, and request 1 fits
behind request 2), tells this mistake from an answer that does not sort: the late match puts
request 2 first there.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, ballast, cached, token_ids
from minisgl_edu.grading.schedule.checks import (
    add_waiting,
    decide_in_order,
    hide_engine_answer,
    items_of,
    lpm_sched,
    show,
    show_expected,
)
from minisgl_edu.scheduler import Scheduler

REMATCHED = (
    "match every waiting request once, before the batch, and keep that order while you admit: a request whose "
    "cached prefix an earlier admission evicted keeps its place (and, not fitting, still stops the batch); do "
    "not match the rest again after each admission"
)
MATCHED_AFTER_THE_CHUNK = (
    "match and sort every waiting request before any reserve: the matches mark the cached prefixes as used, so "
    "a chunk's reserve evicts other pages; ranked after the chunked request's pages were reserved, a request "
    "whose prefix that reserve evicted loses its place. Sort the new requests first, then walk the chunked "
    "requests and the sorted new ones in that order"
)

WANT = ("prefill", [(0, 16, 4), (2, 8, 3)])
LATE = ("prefill", [(0, 16, 4), (1, 0, 5)])  # request 2 ranked after the reserve evicted its prefix
ROOMY = ("prefill", [(0, 16, 4), (2, 8, 3), (1, 0, 5)])  # with free pages: request 1 fits too


def _chunk_must_evict(full: bool) -> Scheduler:
    """The module docstring's scene; with `full` False the pool keeps its free pages (no eviction)."""
    s = lpm_sched(budget=16)
    prefix = cached(s, token_ids(8, 196))  # P: request 2's prefix, cached first (used longest ago)
    cached(s, token_ids(8, 197))  # X
    cached(s, token_ids(8, 198))  # Y, the newest
    head = add_waiting(s, 0, token_ids(20, 199), max_tokens=1, pages=0)
    s.cache.admit(head)
    s.cache.reserve(head, 16)
    apply(s, Batch("prefill", [ScheduledReq(head, 0, 16)]))  # 4 of its 20 prompt tokens to go
    if full:
        ballast(s, s.cache.num_free)  # no free page: the head's next chunk must evict
    add_waiting(s, 1, token_ids(5, 200), max_tokens=1, pages=0)
    # no `pages=2` check of the setup here: that match would mark P as used before the answer's
    add_waiting(s, 2, prefix + token_ids(3, 201), max_tokens=1)
    return s


def _roomy(fn):
    """The answer's batch on the scene with free pages, without the checks of `decide`."""
    s = _chunk_must_evict(full=False)
    hide_engine_answer(s)
    try:
        return items_of(fn(s))
    except Exception:
        return None


def check_matched_before_the_chunk(fn) -> None:
    """The chunked request's reserve evicts a cached page; the new requests are ranked by what the cache
    held before it (the match spares request 2's prefix)."""
    s = _chunk_must_evict(full=True)
    batch = decide_in_order(fn, s)
    if items_of(batch) == WANT:
        return
    what = (
        "request 0 is part-way through its 20-token prompt (16 tokens done, it holds a page-table row) and its "
        "last 4 tokens need one more page; no page is free, so its reserve evicts the least recently used cached "
        "page. Behind it wait request 1 (nothing cached) and request 2 (2 cached prefix pages, the cached prefix "
        "used longest ago), in that order. Matching them first marks request 2's prefix as used, so the reserve "
        "evicts another cached prompt and request 2 goes before request 1: expected "
        f"{show_expected(WANT)}, got {show(batch)}"
    )
    if items_of(batch) == LATE and _roomy(fn) == ROOMY:
        raise Mistake(
            f"{what}. The new requests were ranked after request 0's pages were reserved: that reserve evicted "
            "request 2's cached prefix, which the match would have kept (with free pages, where the reserve "
            "evicts nothing, yours does put request 2 first)",
            MATCHED_AFTER_THE_CHUNK,
        )
    raise AssertionError(what)
