"""Decides which queue holds the request from req.remaining_prompt ("prompt tokens not yet in the
cache, 0 once the prefill is done"): some left means waiting, none means running. On the overlap
loop a prompt whose last chunk is in flight already counts as computed (launch moves cached_len)
but is still in scheduler.waiting: running.remove raises ValueError half-way through the abort."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while its batch is in flight"}
MUST_SAY = "req.remaining_prompt == 0"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decide the queue by membership"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req.remaining_prompt > 0:  # part of its prompt still to compute: it waits
        scheduler.waiting.remove(req)
    else:  # prompt done: it decodes
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
