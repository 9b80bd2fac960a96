"""Caches the computed pages only when the request already has an output token
(cache_it=bool(req.output_ids)). A request aborted part-way through a chunked prefill, or between
schedule() and its first token, has computed K/V for the chunks that ran: those full pages are as
reusable as any other, but this answer gives them all to the free list."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: mid chunked prefill"}
MUST_SAY = "none of the request's computed pages went into the prefix cache"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the chunks that ran are computed: cache them too"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=bool(req.output_ids))
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
