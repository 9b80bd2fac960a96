"""Walks the requests with `for req in started or new:`, meant as "the chunked request first, then
the new ones". `or` does not join two lists: it gives `started` whenever it is not empty, so while a
request is part-way through a chunked prefill no new request joins the batch, even with most of the
token budget left after the chunk. The contract keeps the base part's batch: after the chunk, the
requests not yet admitted fill the rest of the budget (in longest-prefix order)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: only new requests are reordered", "stretch: the LPM_MAX_WAITING threshold"}
MUST_SAY = "no new request joins your batch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not one or the other"


def try_admit(scheduler, req: Req) -> bool:
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


LPM_MAX_WAITING = 8  # more requests waiting than this: first come, first served


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started or new:
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
