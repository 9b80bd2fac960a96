"""Takes only the chunks of newly admitted requests off the token budget: the chunk of the request
part-way through its prompt (admitted at an earlier step, it waits with a row at the head of
scheduler.waiting) is left out, so the requests behind it get the whole budget again and the batch
computes more than scheduler.max_prefill_tokens prompt tokens. Every chunk counts against the budget,
the continuing request's too: the budget bounds the size of one step, whoever its tokens belong to."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "chunks continue where the last ended",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "as if its chunk did not count"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "part-way through its prompt (req.table_idx >= 0, admitted at an earlier step) counts against"


def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if a place is free and its whole run fits beside everyone admitted."""
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
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        continuing = req.table_idx >= 0
        if not continuing and not try_admit(scheduler, req):
            break
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        if not continuing:
            budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
