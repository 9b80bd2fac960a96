"""Counts the free places under scheduler.max_running once, before the loop (max_running minus the
running requests and the waiting ones with a row), and never takes one off when it admits a request
in the same step. With two free places and four short prompts that fit the budget and memory, all
four are admitted at once. The contract: at most scheduler.max_running requests are admitted at
once, running or waiting with a row, the ones admitted in this step included."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"running-request limit", "generated: 250 scheduler states, several steps each"}
MUST_SAY = "max_running = 2"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "count the free places again after each admission"


def fits(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits in memory beside everyone admitted; else change nothing."""
    cache = scheduler.cache
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
    slots = scheduler.max_running - len(scheduler.running) - sum(1 for r in scheduler.waiting if r.table_idx >= 0)
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0 and (slots <= 0 or not fits(scheduler, req)):
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
