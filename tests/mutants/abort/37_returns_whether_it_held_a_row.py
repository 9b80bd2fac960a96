"""Returns whether the request held a row (memory to free), reasoning that True means "something
was freed". A waiting request, never admitted, is removed from the queue and marked finished, but
False is returned. The return value says only whether the uid was live (a key of scheduler.reqs):
the caller reads False as "no such request" and would report to the client that nothing was
aborted."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "must return True; your function returned False (it was waiting"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the return value says only whether the uid was live"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    had_row = req.table_idx >= 0
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return had_row
