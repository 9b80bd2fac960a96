"""Gives the request's pages back by hand, also while its batch is in flight on the overlap loop:
its own pages (those after max(prefix_len, shared_len)) to the allocator's free list, its lock on
the cached prefix undone, its row freed. Right for every other moment, but cache.release() waits
for a batch in flight to land before any page goes back (the GPU may still write them); a free by
hand happens at once, and the next request can be handed a page the batch is still writing."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while its batch is in flight"}
MUST_SAY = "your abort gave them back itself, at once"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release() waits for the batch in flight to land before any page goes back"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if req.table_idx >= 0:
        row = cache.page_table.pages[req.table_idx]
        own_from = max(req.prefix_len, req.shared_len) // cache.page_size
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
