"""Takes a waiting request that holds a table row out of the queue with `popleft()`, reading "a
request with a row is the one whose chunked prefill is under way, so it is the head". Between
schedule() and run_batch() one prefill batch can admit several requests: each holds a row and each
is still in scheduler.waiting. Aborting the second of them pops the first (it keeps its row and
pages but leaves the queue) and the aborted request stays queued."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort between schedule() and run_batch()"}
MUST_SAY = "not necessarily the head"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "remove the aborted request itself from scheduler.waiting"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        if req.table_idx >= 0:
            scheduler.waiting.popleft()  # a chunked prefill in progress is the head of the queue
        else:
            scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
