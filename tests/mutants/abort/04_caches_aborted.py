"""Releases with the default `cache_it=True`, as a finished request does, so the aborted
request's full pages go into the prefix cache. mini-sglang does that; this engine's rule (the
exercise's) is that an aborted request is not cached: its pages go back to the free list."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort mid chunked prefill"}
MUST_SAY = "went into the prefix cache"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "this engine does not cache an aborted request"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
