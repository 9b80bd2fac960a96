"""Sends the request's stop strings as `list(req.sampling_params.stop) or None`, reading None as "this
request has no stop strings". The contract's message carries `stop`, the request's stop strings as
a list (`list(req.sampling_params.stop)`, `[]` when there are none): every message of a request
carries the same list, and the detokenizer iterates it, so None raises TypeError there."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort between schedule() and run_batch()", "generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "carries stop=None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "[] when the request has no stop strings, never None"


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
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop) or None)])
    return True
