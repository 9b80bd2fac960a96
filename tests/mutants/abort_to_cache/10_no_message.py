"""Caches the right pages but never tells the detokenizer: it and the API server keep waiting for
the rest of a stream that will never come."""

from minisgl_edu.core import ReqStatus

MUST_FAIL = {"stretch: decoding, full pages only"}
MUST_SAY = "detokenizer got no message"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "tell the detokenizer once"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    return True
