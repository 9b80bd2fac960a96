"""Counts the pages of every request in the waiting queue, admitted or not, beside the running ones when it
admits (`scheduler.running + list(scheduler.waiting)`), "the queued requests will need their pages too". Only
admitted requests hold a claim on the pool; a request that fits beside them is refused because requests queued
behind it do not, and the head of the queue waits for nothing. (round 28)"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"the same requests in both arrival orders"}
MUST_SAY = "requests still waiting to be admitted"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "the requests queued behind it hold no pages yet"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    claims = scheduler.running + list(scheduler.waiting)  # everyone who will need pages, req included
    cache.admit(req)  # its row and cached prefix first: the prefix pages need not be counted
    need = 0
    for r in claims:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - cache.held_pages(r), 0)
    if need > cache.num_available:
        cache.release(req, cache_it=False)
        req.cached_len = req.prefix_len = 0
        return False
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
