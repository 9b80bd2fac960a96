"""Trusts insert() to adopt every page it is given: the pages the cache already had (another
request's copy of the same tokens, or all of them with the naive cache, which keeps nothing) stay
allocated and belong to no one."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: after a cached prefix", "stretch: with the naive cache"}
MUST_SAY = "neither free nor in the prefix cache"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "n being what insert() returned"


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
        full = req.cached_len // ps
        cache.prefix_cache.insert(req.all_ids[: full * ps], row[:full])
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
