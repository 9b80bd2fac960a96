"""Marks the request with the string `req.status = "finished"` (the value ReqStatus.FINISHED prints as)
instead of the enum member ReqStatus.FINISHED. ReqStatus is a plain Enum: "finished" != ReqStatus.FINISHED,
so req.is_finished stays False, and a batch that schedule() chose before the abort (or one in flight)
still computes the request on the row and pages just given back. Assign ReqStatus.FINISHED."""

from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "not a reqstatus"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "not the enum member ReqStatus.FINISHED"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = "finished"
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
