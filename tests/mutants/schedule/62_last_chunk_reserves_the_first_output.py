"""On a request's last prompt chunk it reserves one slot more than the chunk (`cached_len + chunk + 1`),
"the batch samples the first output token, it needs a place". That token's K/V is computed by the next
(decode) step, which reserves it itself; the contract wants every request in the batch to hold exactly
the pages of the tokens this batch computes, so a prompt that ends on a page boundary takes a page too many."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"a request that needs the whole pool"}
MUST_SAY = "which take 2 pages of 4 tokens, but it holds 3"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "scheduler.cache.reserve(req, start + num_tokens)"


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
        # the last chunk samples the first output token: give it its slot now
        extra = 1 if chunk == req.remaining_prompt else 0
        cache.reserve(req, req.cached_len + chunk + extra)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
