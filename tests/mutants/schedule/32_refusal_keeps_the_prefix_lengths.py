"""Undoes a refused admission with `cache.release(req, cache_it=False)` alone, taking it for the
exact inverse of `cache.admit(req)`. release gives back the row, the pages and the lock, but it does
not reset what admit set on the request: `req.cached_len` and `req.prefix_len` keep the length of the
prefix hit. The contract: a request that is not admitted leaves no trace (no row, no pages,
cached_len and prefix_len 0). Differs whenever a request with a cached prefix (say 8 tokens on pages
of 4) is refused for lack of pages: the contract leaves cached_len = prefix_len = 0, this answer 8
and 8 (and its `remaining_prompt` looks 8 tokens shorter until it is admitted again)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "a cached prefix held by running requests, memory tight",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "was not admitted, but its cached_len and prefix_len are 16 and 16"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "set req.cached_len and req.prefix_len back to 0"


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
        cache.release(req, cache_it=False)  # gives back the row and the prefix: nothing left
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
