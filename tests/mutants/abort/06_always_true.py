"""Tells the detokenizer and returns True whatever the uid, "to be safe". A uid the scheduler
does not know (most often: the request finished a moment before the client hung up) must return
False and send nothing: the client already has its whole answer."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"unknown or finished uid"}
MUST_SAY = "must return False"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "for a uid that is not live"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is not None:
        if req in scheduler.waiting:
            scheduler.waiting.remove(req)
        if req in scheduler.running:
            scheduler.running.remove(req)
        scheduler.cache.release(req, cache_it=False)
        req.status = ReqStatus.FINISHED
        req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", [])])
    return True
