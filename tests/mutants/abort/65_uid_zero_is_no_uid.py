"""Guards against a missing uid with `if not uid: return False` ("no uid given: nothing to
abort"). uid 0 is falsy, yet it is a real uid: the scheduler numbers requests from 0, so the first
request of every server can never be aborted: False is returned, and it keeps its queue place,
row and pages, and runs to its end. Only `uid not in scheduler.reqs` means "not live"."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "abort while decoding"}
MUST_SAY = "your abort returns True for uid 1 and False for uid 0"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "uid 0 is a real uid (the scheduler numbers requests from 0) and it is falsy"


def abort_request(scheduler, uid: int) -> bool:
    if not uid or uid not in scheduler.reqs:  # no uid, or not a live request
        return False
    req = scheduler.reqs.pop(uid)
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
