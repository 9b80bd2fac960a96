"""Returns the aborted Req itself ("truthy, and the caller may want it") instead of True, and False for an
unknown uid. The contract: abort_request returns True when the uid was live and is now aborted; a Req is
not True, and code that tests `is True` or compares the result with True sees a failure. (Round 30,
issue 46.)"""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "must return True; your function returned Req("
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "return True for a live uid"


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
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return req
    ### END SOLUTION
