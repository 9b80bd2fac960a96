"""Sorts the requests not yet admitted by cached pages only when no request is part-way through
its prompt: while a chunked prefill is under way it keeps arrival order for everyone ("as in the
base part"). The contract: a request part-way through its prompt goes first, and the requests not
yet admitted behind it are still considered most cached pages first. E.g. (budget 16): request 0 has
had 32 of its 40 prompt tokens, request 1 (nothing cached) and request 2 (6 cached pages) wait
behind it: the batch must be 0's last 8 tokens, then 2, then 1; this answer takes 1 before 2."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: only new requests are reordered"}
MUST_SAY = "turned the longest-prefix order off"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "still sorted by cached pages, most first: sort them whether or not a chunked prefill is under way"


def try_admit(scheduler, req: Req) -> bool:
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


LPM_MAX_WAITING = 8


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if not started and len(waiting) <= LPM_MAX_WAITING:  # a chunked prefill first, as in the base part
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # nobody overtakes the first one (in this order) that does not fit
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
