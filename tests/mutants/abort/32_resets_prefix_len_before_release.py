"""Clears the request's bookkeeping, `req.cached_len = req.prefix_len = 0` ("the request holds
nothing any more"), and only then calls `scheduler.cache.release(req, cache_it=False)`. release()
learns from `req.prefix_len` (and `req.shared_len`) where the request's own pages start: the row's
pages before that are its prefix hit, pages of the prefix cache that other requests may read. With
prefix_len zeroed, release() takes every page of the row for the request's own and frees the
cached prefix's pages too, while the prefix cache still hands them out. Differs for any request
admitted with a prefix hit: its prefix pages end up cached and free at once (reference: cached
only). Every other abort is right, since a request without a prefix hit has prefix_len 0 anyway."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort with a cached prefix"}
MUST_SAY = "read the aborted request with req.prefix_len = 0"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the request's fields were changed before cache.release() read them"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    req.cached_len = req.prefix_len = 0  # nothing is cached for it any more
    scheduler.cache.release(req, cache_it=False)
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
