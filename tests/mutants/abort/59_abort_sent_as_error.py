"""Tells the detokenizer about the abort with `error="request aborted"` on the last DetokenizeMsg, reading
an abort as a failure. The `error` field means the scheduler REJECTED the request (next_token -1, nothing
generated); an abort is an ordinary end with finish_reason "abort", so the client must get the text so far
and a finished stream, not an error."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "error='request aborted'"
CAUGHT_BY = {"hand"}
HINT_SAYS = "error means the scheduler rejected the request"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
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
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop), error="request aborted")])
    return True
