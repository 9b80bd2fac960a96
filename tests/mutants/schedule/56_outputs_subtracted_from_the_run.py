"""Counts a request's run as len(input_ids) + max_new_tokens - len(output_ids), as if the tokens it
has output were no longer part of it. max_new_tokens is the whole allowance, fixed at admission, and
the pages the request already holds come off as held pages; subtracting its outputs too counts a
running request short, and a request that does not fit is admitted (later it runs out of pages)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"memory: exact fit and one page short"}
MUST_SAY = "your count of a request's pages changes as it generates"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not subtract (or add) the tokens it has output so far"


def try_admit(scheduler, req: Req) -> bool:
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)
    need = 0
    for r in admitted + [req]:
        final = len(r.input_ids) + r.max_new_tokens - len(r.output_ids)
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
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
