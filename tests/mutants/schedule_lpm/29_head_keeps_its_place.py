"""Reads the base part's "nobody overtakes" into the order: the first request not yet admitted keeps
its place at the head, and only the requests behind it are sorted by cached prefix pages. With longest
prefix match every request not yet admitted is sorted, the first to arrive included; "nobody
overtakes" is about admission (the first request in the sorted order that does not fit stops the
batch). The order is right only when the first arrival has the longest cached prefix."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the longest cached prefix goes first", "stretch: ties keep arrival order"}
MUST_SAY = "yours kept it at the head"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the head of the queue was left in place instead of sorted with the rest"


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


LPM_MAX_WAITING = 8  # more requests waiting than this: first come, first served


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        # the first in line keeps its place: nobody overtakes it
        new = new[:1] + sorted(new[1:], key=lambda r: len(cache.match(r)[1]), reverse=True)
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
