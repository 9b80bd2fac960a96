"""Returns with a bare `return` (None) for a uid the scheduler does not know, "nothing to abort", where the
contract says False. None is falsy, so `if not abort(...)` works, but the function is typed `-> bool` and the
server code or tests that check `result is False` (or compare with == False) see something else."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: waiting, unknown or finished: nothing to cache"}
MUST_SAY = "your function returned None"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "return False, and change nothing"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return  # nothing to abort
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
