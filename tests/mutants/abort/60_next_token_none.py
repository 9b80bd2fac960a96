"""Sends the abort message with `next_token=None` ("there is no token") instead of -1. The contract's
message carries next_token=-1: the detokenizer, the API server and the scheduler's own loops compare
next_token with 0 (`>= 0` means a real token), and None cannot be compared, so they crash on it."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "next_token=None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "next_token field is the int -1"


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
    scheduler.io.send([DetokenizeMsg(uid, None, True, "abort", list(req.sampling_params.stop))])
    return True
