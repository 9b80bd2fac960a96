"""Decides which queue to take the request out of from its row: `table_idx < 0` means "still waiting",
a row means "running" ("admission gives the row, and then it decodes"). It releases the memory
correctly in every case. But a request that holds a row can still be in scheduler.waiting: part-way
through a chunked prefill, or admitted by schedule() for its first chunk and aborted before
run_batch(). That request stays in the waiting queue, finished and with its row freed, and the next
schedule() continues its prompt on a row it no longer has (a 40-token prompt with a token budget of
16, aborted after its first chunk)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort mid chunked prefill", "two aborts in both orders"}
MUST_SAY = "still in the waiting queue"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a waiting request, admitted or not"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req.table_idx < 0:
        if req in scheduler.waiting:
            scheduler.waiting.remove(req)
    elif req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
