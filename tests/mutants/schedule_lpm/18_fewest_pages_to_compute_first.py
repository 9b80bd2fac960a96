"""Orders the new requests by the pages each still has to compute, pages_for(prompt) minus its
cached pages, fewest first ("a long cached prefix means little left to compute"), instead of by the
cached pages themselves, most first. The two agree only for prompts of equal length: a short prompt
with nothing cached then goes before a long one with a long cached prefix. E.g. (page size 4) A, a
40-token prompt whose first 32 tokens are cached (8 pages cached, 2 to compute), arriving before B,
a 4-token prompt with nothing cached (1 page to compute): the contract considers A first (8 > 0),
this answer B first."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "stretch: the longest cached prefix goes first",
    "stretch: whole pages, as admit counts them",
    "stretch: generated: 250 scheduler states, several steps each",
}
MUST_SAY = "8 pages cached, 2 still to compute"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not by the pages still to compute"

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
    if len(waiting) <= LPM_MAX_WAITING:
        # the request with the least left to compute goes first (its cached pages are the work saved)
        new.sort(key=lambda r: pages_for(len(r.input_ids), cache.page_size) - len(cache.match(r)[1]))
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
