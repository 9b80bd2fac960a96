"""Checks the token budget after each item, and stops only once it is below zero. Each chunk is
min(remaining prompt, budget), so the budget never goes below zero: once the requests before it use it
up exactly, the next waiting request is admitted and put in the batch with a chunk of 0 tokens, an
item that computes nothing (and holds a row and pages from then on). A batch item computes at least
one token: stop adding requests once the budget is 0 (check budget <= 0 before the next request)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"token budget", "chunks continue where the last ended"}
MUST_SAY = "0 tokens to compute"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a batch item computes at least one token"


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
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
        if budget < 0:  # over the budget: stop here
            break
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
