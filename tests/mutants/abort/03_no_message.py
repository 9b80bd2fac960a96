"""Cleans up the scheduler perfectly but never tells the detokenizer. The detokenizer and the API
server keep the request's state forever, and a client that is still listening never sees the
end of its stream."""

from minisgl_edu.core import ReqStatus

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "got no message"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "tell the detokenizer once"


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
    return True
