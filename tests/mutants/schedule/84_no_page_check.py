"""Checks only the page-table rows before admitting: a student who trusts cache.admit() or cache.reserve() to
fail when pages run short leaves the sum of the needs out of try_admit. Every request is admitted while a row is
free, and a running request can run out of pages half-way."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq

MUST_FAIL = {"a request that does not fit waits"}
MUST_SAY = "your count of pages never says no"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never compares"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)  # the cache hands out pages as they are needed
    return True


def schedule_next_batch(scheduler) -> Optional[Batch]:
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
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
