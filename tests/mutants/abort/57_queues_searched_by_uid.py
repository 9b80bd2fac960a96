"""Takes the request out of its queue by its uid: `if uid in scheduler.waiting: scheduler.waiting.remove(uid)`
(and the same for running), as it took it out of `scheduler.reqs` by uid. The queues hold Req objects, not
uids, so the test is never true: the aborted request stays in waiting or running, with its row and pages
already given back, and the scheduler goes on running it."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "still in the waiting queue"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "remove the aborted request itself"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if uid in scheduler.waiting:
        scheduler.waiting.remove(uid)
    if uid in scheduler.running:
        scheduler.running.remove(uid)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
