"""Reads the sort key from the handle cache.match(req) returns: the tokens on that node's own edge,
len(handle.key) // page_size, instead of the pages of the whole matched path (len(pages)). The
handle is only the deepest node matched; a prefix cached by one request and extended by another, or
split where a later request's match ended, lies over several nodes, and the nodes above keep its
earlier pages. Differs whenever a prefix over several edges meets one on fewer: a 16-token cached
prompt split at 12 by one request's match gives the next request, which matches all 16 tokens, a
key of 1 page instead of 4."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "stretch: whole pages, as admit counts them",
    "stretch: generated: 250 scheduler states, several steps each",
}
MUST_SAY = "not the pages of the whole matched path"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the pages of the whole path from the root, not the deepest node's own edge"

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

    def cached_pages(r):
        handle, _ = cache.match(r)
        return len(getattr(handle, "key", ())) // cache.page_size

    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=cached_pages, reverse=True)
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
