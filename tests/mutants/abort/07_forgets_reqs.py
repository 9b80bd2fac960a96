"""Finds the request with `scheduler.reqs.get(uid)` and cleans up everything else, but leaves it
in `scheduler.reqs`: the scheduler still counts it as live, and a second abort frees its row and
pages a second time."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "still in scheduler.reqs"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "take the aborted request out of scheduler.reqs"


def abort_request(scheduler, uid):
    req = scheduler.reqs.get(uid)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
