"""Sizes each prompt chunk as if the first decode step computed the last prompt token
(`len(req.input_ids) - 1 - req.cached_len`), taking the prefix cache's rule that the last prompt
token is never taken from the cache (it is always computed) for "not computed in the prefill". The
prefill must compute it, as its logits give the first output token: every prompt runs one token
short with budget left over, a one-token prompt gets an empty chunk, and no chunk ever covers the
last token, so the request never leaves the prefill."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"prefill before decode", "several prompts in one batch", "token budget"}
MUST_SAY = "it leaves the last prompt token out of the prefill"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the last one too: its logits give the first output token"


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
        chunk = min(len(req.input_ids) - 1 - req.cached_len, budget)  # the first decode step computes the last
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
