"""Counts the running requests and the requests admitted earlier in this same call, kept in a list,
against scheduler.max_running and the pages, but forgets a request admitted at an earlier step that
is still part-way through its chunked prefill: it waits at the head of scheduler.waiting with a row.
It is admitted all the same, so it takes a row, and its whole run may still take pages: a request
admitted beside it can take one row too many, or leave it short of pages half-way."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"a request part-way through its prompt beside a new one"}
MUST_SAY = "part-way through its chunked prefill"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "count it against scheduler.max_running, like a running request"


def try_admit(scheduler, req: Req, admitted_now: list) -> bool:
    cache = scheduler.cache
    admitted = list(scheduler.running) + admitted_now
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
    admitted_now.append(req)
    return True


def schedule_next_batch(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    items = []
    admitted_now = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req, admitted_now):
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
