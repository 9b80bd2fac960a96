"""Counts a request's pages with a fixed page size of 4, pages_for(final, 4), instead of the cache's
page size. The page size is a setting of the engine (scheduler.cache.page_size): with pages of 8
tokens the count is about twice too many and a request that fits exactly is refused; with pages of
2 it is half too few and a request one page short is admitted, its pages then missing when its run
grows. With pages of 4 every decision is right, so only a scene at another page size shows it."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"memory: exact fit and one page short"}
MUST_SAY = "your count of pages does not follow the page size"
CAUGHT_BY = {"hand"}
HINT_SAYS = "pages_for(tokens, scheduler.cache.page_size), never a fixed number of tokens per page"


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
        need += max(pages_for(final, 4) - cache.held_pages(r), 0)
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
