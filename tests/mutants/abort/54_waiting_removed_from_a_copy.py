"""Takes the request out of both queues in one loop, `for queue in (list(scheduler.waiting), scheduler.running)`,
turning the deque into a list "so that both queues are lists". The list is a copy: the request is removed from
the copy, and an aborted request that was waiting (or part-way through its chunked prefill) stays in
scheduler.waiting, where the next step schedules it again."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "removed it from a list that copied scheduler.waiting"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "removing the request from it leaves scheduler.waiting as it was"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    for queue in (list(scheduler.waiting), scheduler.running):  # both as lists
        if req in queue:
            queue.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
