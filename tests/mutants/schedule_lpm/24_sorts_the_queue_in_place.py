"""Writes the LPM order into scheduler.waiting itself (`waiting.clear(); waiting.extend(...)`), so
that the queue "is" the priority order, then walks the queue as the base part does. The contract:
scheduler.waiting stays in arrival order, and only the order the requests are considered in changes.
A request moved ahead keeps its place in later steps even when its key no longer says so (after an
eviction, or past LPM_MAX_WAITING, where first come, first served must follow arrival order)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the longest cached prefix goes first", "stretch: ties keep arrival order"}
MUST_SAY = "leave the queue in arrival order"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "sort a list of your own, list(scheduler.waiting)"

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
    cache = scheduler.cache
    if len(scheduler.waiting) <= LPM_MAX_WAITING:
        started = [r for r in scheduler.waiting if r.table_idx >= 0]
        new = [r for r in scheduler.waiting if r.table_idx < 0]
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)
        scheduler.waiting.clear()
        scheduler.waiting.extend(started + new)
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
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
