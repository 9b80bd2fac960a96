"""Reserves a request's pages only in the admission branch (the reserve call sits inside
`if req.table_idx < 0:`, "admitting is when a request gets its pages"). A request part-way
through its chunked prefill skips that branch: its next chunk gets an item but no pages, so it
holds fewer than pages_for(end) and the engine writes that chunk's K/V past its row."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"chunks continue where the last ended", "chunks and page boundaries"}
MUST_SAY = "and its new chunk, up to position"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "reserve for every item, the continuing request's too, not only when a request is admitted"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
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
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0:
            if not try_admit(scheduler, req):
                break  # first come, first served
            # a new request: give it the pages of its first chunk
            cache.reserve(req, req.cached_len + min(req.remaining_prompt, budget))
        chunk = min(req.remaining_prompt, budget)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
