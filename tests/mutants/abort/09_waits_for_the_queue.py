"""Waits for the request to leave the waiting queue before freeing it, "so that it is not
half-way through a step". Nothing else runs while the abort runs, so the loop never ends: the
case must fail on its time limit, not hang the grader."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "did not finish within"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "your abort must return at once"
TIME_LIMIT = 5.0


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    while req in scheduler.waiting:
        pass
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
