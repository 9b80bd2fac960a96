"""Counts the new request's need before cache.admit: its whole run minus the pages cache.match
returns, against cache.num_available as it was before admission. When the cached prefix is on pages
no request holds, num_available counts them as evictable, and the need leaves them out as held: they
count twice. After admission they are locked, no longer available, so a request up to the prefix's
pages short is admitted and can run out of pages half-way."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"a cached prefix no request holds, memory tight"}
MUST_SAY = "no request holds"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "Read cache.num_available after admit"


def try_admit(scheduler, req: Req) -> bool:
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    need = 0
    for r in admitted:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - cache.held_pages(r), 0)
    _, prefix = cache.match(req)  # admit will give it these pages: it does not need them again
    final = len(req.input_ids) + req.max_new_tokens
    need += max(pages_for(final, cache.page_size) - len(prefix), 0)
    if need > cache.num_available:
        return False
    cache.admit(req)
    return True


def schedule_next_batch(scheduler) -> Optional[Batch]:
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
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
