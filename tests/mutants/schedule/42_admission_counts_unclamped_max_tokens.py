"""Counts each admitted request's run as len(input_ids) + sampling_params.max_tokens, the answer
length the client asked for, instead of req.max_new_tokens, that length clamped by the scheduler
to what fits in the context. When a request's max_tokens was clamped, the admission counts pages
it can never use: a request that fits exactly (or with a page to spare) beside it is kept waiting,
and one whose own max_tokens was clamped may wait for pages it will never need. The contract:
every admitted request may grow to len(req.input_ids) + req.max_new_tokens tokens. Differs e.g.
with page size 4, 20 available pages, one request with a 10-token prompt, max_tokens 128 and
max_new_tokens 30: the reference admits it (10 pages), this answer does not (35 pages)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"a request that needs the whole pool"}
MUST_SAY = "clamped to req.max_new_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not req.sampling_params.max_tokens"


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
        final = len(r.input_ids) + r.sampling_params.max_tokens  # its longest answer
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
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
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
