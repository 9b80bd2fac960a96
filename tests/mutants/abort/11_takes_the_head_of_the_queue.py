"""Takes a waiting request out of the queue with `popleft()`, as a FIFO queue is consumed. That is
right whenever the aborted request is the head (alone in the queue, or the one whose chunked
prefill is under way), and wrong for one behind it: the head is dropped instead (it keeps its
pages and is never scheduled again) and the aborted request stays queued."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"two aborts in both orders"}
MUST_SAY = "not necessarily the head"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "remove the aborted request itself from scheduler.waiting"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.popleft()
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
