"""Puts the requests with any cached prefix before those with none (a stable sort on "has a hit")
instead of ordering them by how many pages are cached: among the requests with a hit, arrival order
stays, so a request with 2 cached pages goes before a later one with 6. Longest prefix match orders
by the length of the match, so the request that reuses the most pages is admitted first."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the longest cached prefix goes first", "stretch: cached pages make room"}
MUST_SAY = "should hold requests [2, 1, 0]"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "by len(pages) of scheduler.cache.match(req), largest first"

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
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(cache.match(r)[1]) > 0, reverse=True)  # a hit first
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
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
