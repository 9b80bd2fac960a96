"""Works out the chunk, min(req.remaining_prompt, budget), before admitting the request. Before
cache.admit, a new request's cached_len is 0, so its remaining prompt is the whole prompt; admit then
sets cached_len to its cached prefix, and the item starts there but still covers the whole prompt's
length: it runs past the end of the prompt, takes pages for tokens that do not exist and uses budget
that the requests behind it should get. E.g. pages of 4, a 10-token prompt whose first 8 tokens are
cached, budget 16: the item should be (8, 2), this answer's is (8, 10)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "a cached prefix held by running requests, memory tight",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "past the end of its 21-token prompt"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "work the chunk out after cache.admit(req)"


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
        chunk = min(req.remaining_prompt, budget)
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
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
