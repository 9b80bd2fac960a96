"""Takes a waiting request out of the deque by rotating it: pops the head and appends it at the
back until the aborted request is at the head, then pops that one, without rotating back. With two
queued requests the order looks kept, but with three or more the requests that were in front of
the aborted one now come after those behind it: FCFS order is broken (the head part-way through a
chunked prefill is no longer the head)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "scheduler.waiting is [2, 3, 0], expected [0, 2, 3]"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "leave the rest of the deque as it was"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        while scheduler.waiting[0] is not req:
            scheduler.waiting.append(scheduler.waiting.popleft())
        scheduler.waiting.popleft()
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
