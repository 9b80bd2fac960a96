"""Adds up the tokens every admitted request may reach (prompt + max_new_tokens, as mini-sglang's
PrefillAdder counts) and converts the sum into pages once. Each request's last page is partly
empty and no other request can write into it, so the sum undercounts by up to one page per
request: a request one page short is admitted, and someone runs out of pages half-way."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"memory: exact fit and one page short"}
MUST_SAY = "whole pages per request"
CAUGHT_BY = {"hand"}
HINT_SAYS = "A sum of tokens converted into pages once"


def try_admit(scheduler, req: Req) -> bool:
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)
    tokens = sum(len(r.input_ids) + r.max_new_tokens for r in admitted + [req])
    need = pages_for(tokens, cache.page_size) - sum(cache.held_pages(r) for r in admitted + [req])
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
