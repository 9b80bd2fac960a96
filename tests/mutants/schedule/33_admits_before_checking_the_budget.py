"""Admits the next waiting request before looking at the budget: when the requests before it use
the budget up exactly, the loop admits the next one (a row, its cached prefix, a lock) and only then
stops, so a request that is in no item leaves the step admitted. The contract: a request joins a
prefill batch only once admitted, and one that is not in the batch must not be admitted yet ("a
request that is not admitted leaves no trace"). E.g. max_prefill_tokens=8, two waiting prompts of 8
and 5 tokens, plenty of pages: the batch is [A 0..8) and B holds no row; here B holds a row too (and
counts against max_running and the pages from this step on)."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "token budget",
    "chunks continue where the last ended",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "whose items already use the whole token budget"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "look at the budget before admitting"


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
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
        if budget <= 0:
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
