"""Cuts the computed tokens to whole pages itself with `round(req.cached_len / page_size) * page_size`
before release(cache_it=True): round() goes to the NEAREST page (and half to even), not down, so a last
page with 3 of its 4 slots computed (or 2, for an odd page index) counts as full and is cached with slots
whose K/V was never written. Whole pages means rounding down: req.cached_len // page_size (release does it)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: the newest token has no K/V"}
MUST_SAY = "changed req.cached_len from 6 to 8"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "rounding to the nearest page (or up)"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    ps = scheduler.cache.page_size
    req.cached_len = round(req.cached_len / ps) * ps  # whole pages only
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
