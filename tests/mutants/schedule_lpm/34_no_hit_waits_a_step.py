"""Sorts the requests not yet admitted by cached prefix, longest first, but when any of them has a
cache hit it considers only those: the requests with no cached prefix wait for a later step even
when the token budget and the pages have room for them now. Longest prefix match only changes the
order; every request that fits is still admitted in the same step, those without a hit last."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the longest cached prefix goes first"}
MUST_SAY = "in the right order and stops there"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "sort last, they are not left out"

LPM_MAX_WAITING = 8


def try_admit(scheduler, req: Req) -> bool:
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)
    need = 0
    for r in admitted + [req]:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - cache.held_pages(r), 0)
    if need > cache.num_available:
        cache.release(req, cache_it=False)
        req.cached_len = req.prefix_len = 0
        return False
    return True


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    """schedule_next_batch, with the waiting requests not yet admitted considered longest cached prefix first."""
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
        hits = [r for r in new if len(cache.match(r)[1]) > 0]
        if hits:
            new = hits  # the others next step
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
