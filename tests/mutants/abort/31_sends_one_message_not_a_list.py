"""Sends the abort's message on its own, scheduler.io.send(msg), where send takes the step's list
of messages, scheduler.io.send([msg]), as the scheduler sends a step's tokens: send goes through
what it is given item by item, so one DetokenizeMsg fails there with a TypeError, after the
request was already removed and its pages released, and the detokenizer never hears of the abort."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "abort while decoding"}
MUST_SAY = "object is not iterable, inside send()"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "send() goes through what it is given item by item: pass it a list"


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
    scheduler.io.send(DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop)))
    return True
