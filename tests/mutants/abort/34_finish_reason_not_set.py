"""Marks the aborted request FINISHED but never sets req.finish_reason: only the DetokenizeMsg
carries 'abort'. The request object is what the server reads afterwards (why it ended, for the
response and the logs), and a finished request with finish_reason None looks like one that ended
for no reason. An abort sets both: req.status = FINISHED and req.finish_reason = 'abort'."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "abort between schedule() and run_batch()"}
MUST_SAY = "req.finish_reason is None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "req.finish_reason = 'abort'"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
