"""Sends the abort message with finished=False, reading `finished` as "the request reached its normal end"
(the reason "abort" says it did not). The detokenizer and the API server close a request's stream only on
a message with finished=True: they keep its state and the client waits for a last chunk that never comes."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "must have finished=True"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "its finished field is True"


def abort_request(scheduler, uid: int) -> bool:
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
    scheduler.io.send([DetokenizeMsg(uid, -1, False, "abort", list(req.sampling_params.stop))])
    return True
