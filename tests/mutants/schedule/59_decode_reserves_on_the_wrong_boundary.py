"""A decode step reserves a page only when req.total_len is a multiple of the page size, off by one:
the item computes the newest token, at position total_len - 1, and that token is the first of a new
page when total_len % page_size == 1. At that step the request holds one page too few and the engine
writes the token's K/V past its row; at the multiple it reserves nothing new anyway. The contract:
reserve(req, req.total_len) for every decode item, every step; reserve takes only the pages missing."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"chunks continue where the last ended"}
MUST_SAY = "the page of the token this step computes was not reserved"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "one when the newest token (position req.total_len - 1) is the first of a page"


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
        if req.total_len % cache.page_size == 0:  # a full page: the next token needs a new one
            cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
