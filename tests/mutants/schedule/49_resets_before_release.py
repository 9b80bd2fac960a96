"""Undoes a refused admission in the wrong order: the contract's reset, req.cached_len =
req.prefix_len = 0, comes BEFORE cache.release(req, cache_it=False). release reads req.prefix_len to
tell the prefix cache's pages (the cached prefix, locked and shared) from the request's own; with 0
there it takes every page of the row for the request's own and puts the cached prefix pages on the
free list, though the prefix cache still holds them (a page both free and cached). Differs whenever
a request with a cached prefix is refused for lack of pages. The other fields release reads
(table_idx, cache_handle) fail the same way when changed first."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "a cached prefix held by running requests, memory tight",
    "a cached prefix no request holds, memory tight",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "the request's fields were changed before release() read them"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "call cache.release(req, cache_it=False) first, while the request is as cache.admit left it"


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
        req.cached_len = req.prefix_len = 0  # leave no trace
        cache.release(req, cache_it=False)
        return False
    return True


def schedule_next_batch(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
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
