"""Frees the request's own pages by hand (and lets release() do it while a batch is in flight),
finding where they start with true division: `max(req.prefix_len, req.shared_len) / page_size`.
`/` always gives a float (0 / 4 == 0.0), and a float cannot slice a list: every abort of an admitted
request raises TypeError before its pages, row and lock go back. A page count needs `//`."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort after many requests", "the same uid aborted twice"}
MUST_SAY = "slice indices must be integers"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a slice bound that is not an int, most often a float from true division"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if scheduler.has_in_flight:  # on the overlap loop: release() waits for the batch to land
        cache.release(req, cache_it=False)
    elif req.table_idx >= 0:
        row = cache.page_table.pages[req.table_idx]
        own_from = max(req.prefix_len, req.shared_len) / cache.page_size  # pages before are the cache's
        cache.allocator.free(list(row[own_from:]))
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
