"""Sorts the requests not yet admitted by the share of the prompt that is cached (matched tokens /
len(req.input_ids)), largest first, instead of by the number of cached pages. A long prompt with a
long cached prefix can have a smaller share cached than a short prompt with a short one, though it
saves more pages: cached 24 of 54 tokens (6 pages, 44%) against 8 of 10 (2 pages, 80%), this answer
admits the 10-token request first, the reference the 54-token one. On a tie in cached pages the
share puts the shorter prompt first, where the contract keeps arrival order."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "stretch: the longest cached prefix goes first",
    "stretch: generated: 250 scheduler states, several steps each",
}
MUST_SAY = "You sort by the share of the prompt that is cached"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not by the share of the prompt they cover"

LPM_MAX_WAITING = 8


def try_admit(scheduler, req: Req) -> bool:
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


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]
    new = [r for r in waiting if r.table_idx < 0]

    def cached_share(r):  # how much of the prompt is already cached
        _, pages = cache.match(r)
        return len(pages) * cache.page_size / len(r.input_ids)

    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=cached_share, reverse=True)
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
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
