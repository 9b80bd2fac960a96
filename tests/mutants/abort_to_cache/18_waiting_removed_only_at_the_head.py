"""Takes the request out of the waiting queue only when it is the head ("the one being prefilled is
at the front": `if scheduler.waiting[0] is req: popleft()`). A request waits anywhere in that deque,
admitted or not; one further back stays there, finished and released, and schedule() admits it
later: it takes a row and pages for a request no one reads, and sends tokens for a uid the
detokenizer has closed. Differs e.g. for two waiting requests, the second aborted: reference
waiting [0], this answer [0, 1]."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: waiting, unknown or finished: nothing to cache"}
MUST_SAY = "still in the waiting queue"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "is somewhere in that deque, not necessarily the head"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if scheduler.waiting and scheduler.waiting[0] is req:
        scheduler.waiting.popleft()
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
