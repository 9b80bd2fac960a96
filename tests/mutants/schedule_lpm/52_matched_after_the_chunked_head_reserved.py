"""Serves the requests part-way through a chunked prefill first, their reserve() included, and only
then matches and sorts the new ones. That reserve can evict the least recently used cached prefix, one
a new request's match would have marked as used and spared: the request is ranked by a cache that has
already changed and loses its place. The contract matches every waiting request before the batch."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: cached pages make room"}
MUST_SAY = "ranked after request 0's pages were reserved"
CAUGHT_BY = {"hand"}
HINT_SAYS = "match and sort every waiting request before any reserve"

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
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started:  # they go first, in arrival order
        if budget <= 0:
            break
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
    for req in new:
        if budget <= 0:
            break
        if not try_admit(scheduler, req):
            break
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
