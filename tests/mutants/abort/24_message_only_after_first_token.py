"""Tells the detokenizer only when the request has produced at least one token (`if
req.output_ids:`), reasoning that the detokenizer and the API server only know a request once its
first token was streamed. The contract: after an abort that returns True, exactly one
DetokenizeMsg(uid, -1, True, "abort", stop) is sent, wherever the request was. A request aborted
while waiting (or part-way through a chunked prefill) has no output yet: this answer sends nothing,
and the client that is still connected never sees its stream end."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "got no message for the aborted request"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "tell the detokenizer once"


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
    if req.output_ids:  # the detokenizer only knows a request once it has streamed a token
        scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
