"""Caches every page of the request's row: a page reserved by schedule() for the token the
next batch computes holds no K/V when the abort lands between schedule() and run_batch()."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: between schedule() and run_batch()"}
MUST_SAY = "every page of its row"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "a page reserved for a step that has not run holds no K/V"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if req.table_idx >= 0:
        ps = cache.page_size
        row = cache.page_table.pages[req.table_idx]
        own_from = max(req.prefix_len, req.shared_len) // ps
        full = len(row)
        existing = cache.prefix_cache.insert(req.all_ids[: full * ps], row[:full])
        cache.allocator.free(row[own_from:existing])
        cache.allocator.free(row[full:])
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
