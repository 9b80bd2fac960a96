"""Breaks ties in cached pages by the prompt's length, longest first (a second sort key), instead of
keeping the arrival order. The contract: requests with the same number of cached pages keep their
arrival order. Differs e.g. with two requests of 2 cached pages each, a 10-token prompt that arrived
first and a 17-token prompt behind it: the reference considers the first arrival first, this answer
the longer prompt."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "stretch: ties keep arrival order",
    "stretch: whole pages, as admit counts them",
    "stretch: no cached prefix, arrival order",
    "stretch: no prefix cache, first come first served",
}
MUST_SAY = "you break ties by the longer prompt"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "keep their arrival order, not the longer prompt first"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
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
    """schedule_next_batch, with the waiting requests not yet admitted considered longest cached prefix first."""
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(
            key=lambda r: (len(cache.match(r)[1]), len(r.input_ids)), reverse=True
        )  # the longer prompt first among equal matches
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
