"""Marks the request finished and tells the detokenizer first ("the client hears at once"), and only
then takes it out of its queue, choosing the queue by its status: waiting or prefilling from
scheduler.waiting, decoding from scheduler.running. By then the status it tests is FINISHED, so the
request is taken out of neither queue and the scheduler keeps scheduling a request it no longer knows."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding"}
MUST_SAY = "runs after it marked the request finished"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the queue chosen by a test of req.status placed after"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    if req.status in (ReqStatus.WAITING, ReqStatus.PREFILLING):
        scheduler.waiting.remove(req)
    elif req.status == ReqStatus.DECODING:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    return True
