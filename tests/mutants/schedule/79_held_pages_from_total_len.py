"""try_admit counts the pages an admitted request holds as the pages of its length,
`pages_for(r.total_len, page_size)`, instead of asking `cache.held_pages(r)`. The request just admitted
holds none of its prompt's pages yet, and a decoding request's newest token gets its page only at the
next decode step: both are credited as held, the need comes out too low, and a request is admitted
that cannot finish."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"memory: exact fit and one page short"}
MUST_SAY = "it reads held pages from each request's length"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "cache.held_pages(r), not pages_for(r.total_len, page_size)"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)  # its row and cached prefix first: the prefix pages need not be counted
    need = 0
    for r in admitted + [req]:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - pages_for(r.total_len, cache.page_size), 0)
    if need > cache.num_available:
        cache.release(req, cache_it=False)
        req.cached_len = req.prefix_len = 0
        return False
    return True
    ### END SOLUTION


def schedule_next_batch(scheduler) -> Optional[Batch]:
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
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
    ### END SOLUTION
