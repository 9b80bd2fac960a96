"""In the LPM order, admits the next request before looking at the budget: when the requests before
it use the budget up exactly, the loop admits the next one (a row, its cached prefix locked, its pages
counted) and only then stops, so a request that is in no item leaves the step admitted. A request
joins a prefill batch only once admitted, and one that is not in the batch must not be admitted yet:
test the budget first, then call try_admit. E.g. a token budget of 24 used up by the first requests
in LPM order: the next one holds a row but computes nothing this step, and counts against
max_running and the pages from then on."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: the LPM_MAX_WAITING threshold", "stretch: only new requests are reordered"}
MUST_SAY = "it was admitted with no token left for it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "look at the budget before admitting"

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
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break
        if budget <= 0:
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
