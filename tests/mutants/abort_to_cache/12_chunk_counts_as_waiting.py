"""Treats a request still in the waiting queue as one that computed nothing: part-way through a
chunked prefill it is still waiting, but the chunks that ran have K/V worth caching."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: mid chunked prefill"}
MUST_SAY = "none of the request's computed pages"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "the chunks that ran are computed: cache them too"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=req.status == ReqStatus.DECODING)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
