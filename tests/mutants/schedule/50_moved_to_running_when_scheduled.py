"""Moves a request to the running set in the decision itself: when its prompt's last chunk is
scheduled, it is taken out of scheduler.waiting, put in scheduler.running and marked DECODING before
the batch has run. The chunk's K/V and the request's first token do not exist yet; the engine moves
the request when that chunk's result lands (after the batch runs), and with it already running the
batch is a prefill batch that carries a running request."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "prefill before decode",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "is in scheduler.running after it"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "it moves to scheduler.running when that chunk's result lands"


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
    for req in list(scheduler.waiting):
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        if chunk == req.remaining_prompt:
            scheduler.waiting.remove(req)
            scheduler.running.append(req)
            req.status = ReqStatus.DECODING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
