"""Gives back at once the pages past the computed tokens ("a page reserved for the next step holds
no K/V yet") with cache.trim(), then releases the rest. On the overlap loop, when the computed
tokens end at a page boundary, that page was reserved for the step in flight: the GPU is writing
it while it is already on the free list, and the next request given it reads garbage."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.kvcache import pages_for
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: its batch in flight"}
MUST_SAY = "reserved for the step in flight"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "a page reserved for the step in flight holds no K/V yet"


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
        row = list(cache.page_table.pages[req.table_idx])
        computed = pages_for(req.cached_len, cache.page_size)
        if len(row) > computed:
            cache.trim(req, row[computed:])
    cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
