"""Takes the request out of its queue with one try block around both removals,
`try: waiting.remove(req); running.remove(req) except ValueError: pass`, "it is in one of the two".
For a waiting request that works, but for a decoding request waiting.remove raises first and the
running.remove after it never runs: the aborted request stays in scheduler.running after its memory
was released, and the next decode step schedules it again."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding"}
MUST_SAY = "still in the running set"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "one try around both removes"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    try:
        scheduler.waiting.remove(req)
        scheduler.running.remove(req)
    except ValueError:
        pass  # it is in one queue, not both
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
