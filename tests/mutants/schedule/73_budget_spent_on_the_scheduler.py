"""Counts the prefill budget down on the scheduler itself (`scheduler.max_prefill_tokens -= chunk`)
instead of in a local variable, 'the budget is the scheduler's'. The budget is per batch: every
prefill step starts from the full max_prefill_tokens, but this one keeps what earlier steps spent,
so later prefill batches get smaller and smaller chunks and, once it reaches 0, no prompt token is
ever scheduled again."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"token budget", "long prompt is chunked", "chunks continue where the last ended"}
MUST_SAY = "changed scheduler.max_prefill_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count what this batch spends in a variable of your own"


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
    for req in scheduler.waiting:
        if scheduler.max_prefill_tokens <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
        chunk = min(req.remaining_prompt, scheduler.max_prefill_tokens)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        scheduler.max_prefill_tokens -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
