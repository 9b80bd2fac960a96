"""Builds a mixed batch, as SGLang does with --enable-mixed-chunk: when prompt tokens run, the prefill
batch also carries one decode item for every running request, after the prompt chunks. In this
exercise a batch is either prefill or decode: a prefill batch holds waiting requests only, and the
running requests get their next token in a decode batch, built only when no prompt token can run.
The engine's mixed batches are a separate option (SchedulerConfig.mixed_chunk) with a phase of their
own; a "prefill" batch that carries decode items is neither."""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.kvcache import pages_for

MUST_FAIL = {
    "prefill before decode",
    "memory: exact fit and one page short",
    "generated: 250 scheduler states, several steps each",
}
MUST_SAY = "also carries a decode item"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "a prefill batch holds waiting requests only, and the running requests wait for the next decode batch"


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
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    phase = "prefill" if items else "decode"
    for req in scheduler.running:  # the running requests ride along in every batch
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch(phase, items) if items else None
