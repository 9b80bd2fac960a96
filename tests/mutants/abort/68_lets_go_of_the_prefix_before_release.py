"""Clears req.cache_handle before calling release() ("first drop the request's hold on its cached
prefix, then give its pages back"). release() is what gives the hold up: it unlocks the node that
req.cache_handle names. With the handle gone it has nothing to unlock (the radix cache's unlock
walks from None), so the prefix lock is never released and the release does not complete."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding", "abort with a cached prefix"}
MUST_SAY = "read the aborted request with req.cache_handle = None"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "the request's fields were changed before cache.release() read them"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.cache_handle = None  # the request no longer holds its cached prefix
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
