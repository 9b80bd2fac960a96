"""When the request's batch is still in flight on the overlap loop, it unpins the request itself
(`scheduler.cache.unpin([req])`) so that release() frees its row and pages now instead of waiting.
The pin belongs to the batch: the GPU may still write the request's K/V into those pages, and when
the batch lands the loop unpins it again, which finds no pin (KeyError). From round 29 (issue 46)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while its batch is in flight"}
MUST_SAY = "your abort called scheduler.cache.unpin()"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never unpin the request yourself"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # its batch may still be on the GPU: unpin it, so that release() gives everything back now
    if scheduler.cache._pins.get(id(req)):
        scheduler.cache.unpin([req])
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
