"""Compares scheduler.max_running with len(scheduler.running) only. An admitted request is not in
scheduler.running until its prompt is done: one admitted in this step waits with a row, and so does
one admitted at an earlier step that is part-way through its chunked prefill. The limit counts every
admitted request, running or waiting with a row, so with a limit of 2 and nobody running this answer
admits four short prompts at once, and beside one running request and one part-way through its
prompt it admits a third."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "running-request limit",
    "a request part-way through its prompt beside a new one",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "counts scheduler.running only"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "running or waiting with a row (admitted at an earlier step or in this one): count them all"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if a place is free and its whole run fits beside everyone admitted."""
    cache = scheduler.cache
    if len(scheduler.running) >= scheduler.max_running:
        return False
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
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
