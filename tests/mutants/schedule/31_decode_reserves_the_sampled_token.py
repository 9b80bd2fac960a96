"""In a decode batch, reserves pages for `req.total_len + 1` tokens ("room for the token this step
samples"), where the item computes position total_len - 1 and ends at total_len. The sampled token's
K/V is computed by the next step, which reserves for it then. Whenever total_len is a multiple of the
page size, the request takes a page one step early: it holds pages_for(end) + 1 pages, a page that
admission counted as available to others (the contract: a request holds exactly the pages of its
tokens up to its item's end). E.g. one running request of 8 tokens (page size 4, 2 pages held): the
contract reserves nothing more, this answer takes a third page."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "decode batch",
    "a cached prefix held by running requests, memory tight",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "it reserved room for the token this step samples"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a decode item ends at req.total_len: reserve(req, req.total_len), not total_len + 1"


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


def schedule_next_batch(scheduler) -> Optional[Batch]:
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
        cache.reserve(req, req.total_len + 1)  # room for the token this step samples
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
