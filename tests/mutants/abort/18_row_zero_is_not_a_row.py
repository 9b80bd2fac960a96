"""Releases the request's memory only `if req.table_idx > 0`, meaning "if it was admitted"; row 0 is
a valid page-table row (-1 means none). A request that got row 0, most often the first admitted,
keeps its row and pages for ever when aborted."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {
    "abort while decoding",
    "abort with a cached prefix",
    "the same uid aborted twice",
    "generated: 150 schedulers with aborts at any moment",
}
MUST_SAY = "leaves one on row 0 holding them"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "row 0 is a real page-table row"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.table_idx > 0:  # admitted: it holds a row and pages
        scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
