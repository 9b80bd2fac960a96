"""Releases the first of n answers to one prompt (req.shares_prompt) with cache_it=False, reading
"nothing twice" as "its prompt is already in the prefix cache, so caching it would add a copy".
release() already keeps the handed-over prompt pages the cache's and files only new pages; the
leader's computed full OUTPUT pages past req.shared_len are then freed instead of cached, and a
retry of that conversation finds only the prompt."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: the first of n answers to one prompt"}
MUST_SAY = "none of the request's computed pages went into the prefix cache"
CAUGHT_BY = {"hand"}
HINT_SAYS = "release(req, cache_it=True) files its computed full pages"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # The leader of n answers handed its prompt to the cache already: don't cache it twice.
    scheduler.cache.release(req, cache_it=not req.shares_prompt)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
