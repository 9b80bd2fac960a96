"""Returns False for a uid that is not in `scheduler.reqs`, but first sweeps the page table for a
row still owned by that uid and frees it, "so that nothing of the uid is left behind". After an
abort that landed while the request's batch was in flight, the release waits for the batch and
the row is still there: a second abort of the same uid frees its pages while the batch may still
write them, and the waiting release then finds a freed row. A second abort must change nothing."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"the same uid aborted twice"}
MUST_SAY = "changed"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "not yours to clean up any more"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        cache = scheduler.cache
        for row, owner in list(cache.uid_of_row.items()):
            if owner == uid:
                cache.allocator.free(
                    [p for p in cache.page_table.pages[row] if p not in cache.prefix_cache.cached_pages()]
                )
                del cache.uid_of_row[row]
                cache.page_table.free_row(row)
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
