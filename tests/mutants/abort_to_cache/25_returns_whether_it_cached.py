"""Returns whether anything could be cached: True only when the request had computed at least one
full page (cached_len >= page_size). A waiting request, or one that computed less than a page, is
removed, released and marked finished, but False is returned. The return value says only whether the
uid was live (a key of scheduler.reqs), not whether the cache gained a page: the caller reads False
as "no such request"."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: waiting, unknown or finished: nothing to cache"}
MUST_SAY = "must return True; your function returned False (it was waiting"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "whatever it held or could cache"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cached_any = req.cached_len >= scheduler.cache.page_size
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return cached_any
