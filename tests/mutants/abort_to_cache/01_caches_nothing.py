"""The base part's answer: every page of the aborted request goes back to the free list, so a
new request with the same prompt computes it all again."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {
    "stretch: decoding, full pages only",
    "stretch: the newest token has no K/V",
    "stretch: mid chunked prefill",
}
MUST_SAY = "none of the request's computed pages"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "its computed full pages go into the prefix cache"


def abort_request_to_cache(scheduler, uid):
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
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
