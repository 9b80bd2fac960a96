"""Sends DetokenizeMsg(uid, -1, True, "abort") without the request's stop strings: the message is
the last the detokenizer gets for the uid, and like every message of the request it carries the
stop strings (`stop`, the detokenizer holds back text that may start one); here it says the
request has none."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "stop"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "list(req.sampling_params.stop)"


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
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort")])
    return True
