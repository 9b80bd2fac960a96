"""Cuts the computed tokens to whole pages on a copy of the request, copy.copy(req) with cached_len
rounded down, and releases the copy ("leave the request's own fields alone"). The cache manager knows
a request by identity: the copy is not pinned, so with the request's batch in flight on the overlap
loop its pages are cached and freed at once while the GPU still writes them; req keeps its row index."""

import copy

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: its batch in flight"}
MUST_SAY = "is not the request (a copy)"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release the request itself, not a copy"


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
    view = copy.copy(req)  # the request itself keeps its counts
    view.cached_len = req.cached_len // ps * ps  # whole pages only
    scheduler.cache.release(view, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
