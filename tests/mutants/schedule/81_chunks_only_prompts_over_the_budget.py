"""Cuts a prompt into chunks only when it is longer than the whole token budget (it could never run in one piece);
a prompt that merely does not fit in what is left of this step's budget waits for the next step and ends the
batch. The contract wants the batch as full as budget and queue allow: the last item is cut wherever the budget
runs out, so the step leaves budget unused that a chunk should take."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"token budget"}
MUST_SAY = "a 6-token chunk of the second fills the budget"
CAUGHT_BY = {"hand"}
HINT_SAYS = "the request gets what is left"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)  # its row and cached prefix first: the prefix pages need not be counted
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
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if items and scheduler.max_prefill_tokens >= len(req.input_ids) - req.cached_len > budget:
            break  # it fits whole into the next step's budget: no need to cut it
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
