"""Takes the request with `scheduler.reqs.pop(uid)` and no default, assuming an abort always names a
live request. A client that hangs up just as its answer ends sends the abort for a uid that has
already finished (or was aborted already): pop raises KeyError in the scheduler's message loop
instead of returning False."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "your code raised KeyError"
CAUGHT_BY = {"generated"}
HINT_SAYS = "a uid may be unknown, finished or aborted already"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid)
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
