"""Frees by hand the pages that hold the request's computed K/V, `pages_for(req.cached_len)` of
its row after its cached prefix, unlocks the prefix and frees the row (and lets `release()` do it
when the batch is in flight, as the grader's message says). When the computed tokens end exactly
at a page boundary and `schedule()` has already reserved the next page for the token about to be
computed, that page is in the row too, and it leaks."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort at a page boundary and one token past it"}
MUST_SAY = "reserved"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "reserved by schedule() for the next step is the request's too"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if scheduler.has_in_flight and req in scheduler.in_flight_batch.reqs:
        cache.release(req, cache_it=False)
    elif req.table_idx >= 0:
        row = cache.page_table.pages[req.table_idx]
        own_from = max(req.prefix_len, req.shared_len) // cache.page_size
        cache.allocator.free(row[own_from : pages_for(req.cached_len, cache.page_size)])
        cache.prefix_cache.unlock(req.cache_handle)
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
