"""Aborts lazily, as SGLang marks a request `to_abort` and lets the loop finish it: it takes the request
out of scheduler.reqs, marks it FINISHED with reason "abort" and tells the detokenizer, but leaves it in
its queue and its memory held, "the scheduler drops finished requests". This scheduler's loop never looks
at the status of a queued request: it is still scheduled, computes tokens, and its pages are never freed."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "still in the waiting queue"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "remove the aborted request itself from scheduler.waiting"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    # mark it; the scheduler's next step finishes it and frees what it holds
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
