"""Reads "prefill first" as "while anyone waits, only a prefill": when requests wait but none of
them can run a prompt token this step (the head does not fit in memory or in max_running), it
returns None instead of a decode batch. The contract: the batch is a prefill batch "if any prompt
token can be computed this step", and "a decode batch only when none can"; None only when nothing can
run at all. The running requests then never decode, never finish, never give their pages back, and
the head waits for ever. Differs e.g. with one running request holding most of the pages and a
waiting request whose whole run does not fit beside it: the reference decodes the running request,
this answer returns None."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"a request that does not fit waits"}
MUST_SAY = "expected a decode batch"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "prefill first does not mean prefill only"


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
    if scheduler.waiting:
        return None  # someone waits for a prompt step: prefill comes first
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
