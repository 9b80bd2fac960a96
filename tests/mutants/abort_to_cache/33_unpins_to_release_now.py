"""When the request's batch is still in flight, it unpins the request itself
(`scheduler.cache.unpin([req])`) so that release(cache_it=True) runs now instead of when the batch
lands. The pin is the batch's, not the abort's: the pages it inserts or frees may still be written
by the GPU, and the landing batch unpins it again (KeyError). From round 29 (issue 46)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: its batch in flight"}
MUST_SAY = "your abort called scheduler.cache.unpin()"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never unpin the request yourself"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # its batch may still be on the GPU: unpin it, so that release() does its work now
    if scheduler.cache._pins.get(id(req)):
        scheduler.cache.unpin([req])
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
