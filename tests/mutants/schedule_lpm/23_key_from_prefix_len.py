"""Orders the requests not yet admitted by req.prefix_len ("its first prefix_len tokens sit in pages
of the prefix cache"), most first, instead of by what cache.match(req) returns now. prefix_len is
set by cache.admit, so it is 0 for every request that holds no row (a refused admission resets it
to 0 too): every key ties, and the order stays first come, first served whatever the cache holds.
The contract: the key is the number of prefix pages cache.admit(req) WOULD give, what
scheduler.cache.match(req) returns. Differs whenever a later request has a longer cached prefix
than one before it: e.g. A (nothing cached) then B (whose first 8 tokens are cached, pages of 4),
budget for one of them: the reference's batch starts with B, this answer's with A."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the longest cached prefix goes first"}
MUST_SAY = "len(pages) of scheduler.cache.match(req)"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "sort the requests not yet admitted by len(pages) of scheduler.cache.match(req)"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)  # its row and cached prefix first: the prefix pages need not be counted
    need = 0
    for r in admitted + [req]:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - cache.held_pages(r), 0)
    if need > cache.num_available:
        cache.release(req, cache_it=False)
        req.cached_len = req.prefix_len = 0
        return False
    return True
    ### END SOLUTION


def schedule_next_batch(scheduler) -> Optional[Batch]:
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
    ### END SOLUTION


LPM_MAX_WAITING = 8  # more requests waiting than this: first come, first served


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    """schedule_next_batch, with the waiting requests not yet admitted considered longest cached prefix first."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: r.prefix_len, reverse=True)  # its cached prefix; stable: ties keep arrival order
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # nobody overtakes the first one (in this order) that does not fit
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
    ### END SOLUTION
