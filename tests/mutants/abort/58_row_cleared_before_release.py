"""Marks the request as holding nothing first (`req.table_idx = -1`, "it leaves its row") and only then calls
`scheduler.cache.release(req, cache_it=False)`. release() reads the row from req.table_idx, and -1 means "never
admitted, nothing to give back": the row stays taken and every page of the request (its own and its lock on the
cached prefix) is lost to the pool."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"the same uid aborted twice"}
MUST_SAY = "req.table_idx = -1"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "changed before cache.release() read them"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    req.table_idx = -1  # it leaves its page-table row
    scheduler.cache.release(req, cache_it=False)
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
