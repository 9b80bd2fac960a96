"""Counts every token of the request as computed (len(req.all_ids)): the newest sampled token
has no K/V until the next step runs it, so when it completes a page, that page is cached with an
empty slot."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: the newest token has no K/V"}
MUST_SAY = "newest sampled token"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "the newest sampled token has no K/V until the next step"


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
        full = len(req.all_ids) // ps
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
