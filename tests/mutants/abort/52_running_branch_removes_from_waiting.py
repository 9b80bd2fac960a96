"""Writes the second queue test by copying the first and changing only the condition:
`if req in scheduler.running: scheduler.waiting.remove(req)`. A decoding request is not in the
waiting queue, so aborting it raises ValueError half-way (after it left scheduler.reqs, before its
memory is released or the client is told); it also stays in scheduler.running."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding"}
MUST_SAY = "is not in deque"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "it is in scheduler.running"


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
        scheduler.waiting.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
