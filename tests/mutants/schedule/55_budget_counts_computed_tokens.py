"""Takes req.cached_len + chunk off the prefill token budget: the tokens computed at earlier steps
(earlier chunks, or a cached prefix) as well as the chunk this batch computes. The budget bounds
the tokens one batch computes, and those are the chunks only, so once a request part-way through
its prompt has a chunk, the batch stops with budget left while the next request waits."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"chunks continue where the last ended"}
MUST_SAY = "were taken off the budget too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only the tokens a batch computes count against scheduler.max_prefill_tokens"


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
            break  # first come, first served
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= req.cached_len + chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
