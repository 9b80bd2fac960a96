"""Releases the request, then unlocks the prefix it matched until no lock is left on it, "so that
the aborted prompt's pages are evictable again". A lock is a count of the requests reading those
pages, not a flag of this one: when another running request was admitted with the same cached
prefix, its lock goes too, and the cache may evict pages that request still reads."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while others hold its cached prefix"}
MUST_SAY = "still reads"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "a lock counts the requests reading"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    handle = req.cache_handle
    scheduler.cache.release(req, cache_it=False)
    tree = scheduler.cache.prefix_cache
    if handle is not None and handle is not getattr(tree, "root", None):
        while handle.lock_ref > 0:
            tree.unlock(handle)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
