"""Marks the request finished first and then releases its memory only `if req.status != ReqStatus.FINISHED`,
a guard meant to keep a request that finished normally (and was released then) from being released twice.
The guard runs after the marking, so it is always false: no aborted request gives back its row or its
pages, and its prefix stays locked."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding"}
MUST_SAY = "runs after your abort marked the request finished"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "placed after req.status = ReqStatus.FINISHED is always false"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    if req.status != ReqStatus.FINISHED:  # a request that finished normally was released already
        scheduler.cache.release(req, cache_it=False)
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
