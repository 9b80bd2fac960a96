"""When the budget cuts a prompt, ends the chunk on the last page boundary it reaches ("so that the
next chunk starts on a fresh page"), when that still leaves at least one token, instead of where the
budget runs out. The contract: every item but the last covers its request's whole remaining prompt,
and the last is cut only where the budget runs out (a chunk may be any size from one token): the
batch must be as full as the budget allows. Differs e.g. with pages of 4, a 13-token prompt and a
budget of 7: the reference's item is (0, 7) (it ends inside page 1), this answer's (0, 4); with a
budget of 10, (0, 10) against (0, 8)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {"token budget", "chunks and page boundaries"}
MUST_SAY = "a 6-token chunk of the second fills the budget"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "the request gets what is left"


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
        if chunk < req.remaining_prompt:
            # a cut chunk ends on a page boundary, so that the next chunk starts on a fresh page
            end = (req.cached_len + chunk) // cache.page_size * cache.page_size
            if end > req.cached_len:
                chunk = end - req.cached_len
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
