"""Unlocks the request's cached prefix itself, then lets release() unlock it again: with another
request on the same prefix, that takes away the other's lock, and the pages it still reads can be
evicted under it."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: after a cached prefix"}
MUST_SAY = "released twice"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "release() already does"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.prefix_cache.unlock(req.cache_handle)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
