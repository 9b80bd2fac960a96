"""Frees every page in the request's page-table row by hand instead of calling
`cache.release()`. When the prompt reused a cached prefix, the first pages of that row belong to
the prefix cache (shared with every request with the same prompt start): they land on the free
list while the cache still hands them out, and the prefix stays locked."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort with a cached prefix"}
MUST_SAY = "belong to the prefix cache"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "belong to the prefix cache: free only the request's own pages"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.table_idx >= 0:
        table = scheduler.cache.page_table
        scheduler.cache.allocator.free(table.pages[req.table_idx])
        table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
