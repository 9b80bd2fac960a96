"""Picks the requests one at a time: each time the batch needs the next one, it matches every request
still waiting against the prefix cache again and takes the longest cached prefix as it is now ("the
cache changes as requests are admitted"). The contract matches every waiting request once, before the
batch is built, and considers them in that order. Two things differ: an earlier admission's reserve()
can evict the prefix a later request was ranked by, so that request loses its place; and each extra
cache.match() marks the matched pages as used, so the cache's least-recently-used order, and with it
which prefixes later evictions keep, changes. E.g. a tight pool with requests A (3 cached pages), B
(2) and C (none): reserving A's last page evicts B's pages; in the fixed order B comes next, does not
fit and stops the batch, while here B and C are matched again, tie at 0, and C (arrived first) is
admitted."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"stretch: cached pages make room"}
MUST_SAY = "The order, fixed before the batch: 2, 1, 0"
CAUGHT_BY = {"hand"}
HINT_SAYS = "do not match the rest again after each admission"


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
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None


LPM_MAX_WAITING = 8  # more requests waiting than this: first come, first served


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    """schedule_next_batch, with the waiting requests not yet admitted considered longest cached prefix first."""
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    lpm = len(waiting) <= LPM_MAX_WAITING
    todo = list(started)
    items = []
    budget = scheduler.max_prefill_tokens
    while todo or new:
        if budget <= 0:
            break
        if todo:
            req = todo.pop(0)
        elif lpm:
            # the cache changes as requests are admitted: pick the longest cached prefix as it is NOW
            keys = [len(cache.match(r)[1]) for r in new]
            req = new.pop(keys.index(max(keys)))  # index(): the first of equals, arrival order
        else:
            req = new.pop(0)
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
