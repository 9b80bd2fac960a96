"""Builds the abort message with its positional arguments in the order "uid, token, reason, finished":
`DetokenizeMsg(uid, -1, "abort", True, stop)`. DetokenizeMsg's fields are (uid, next_token, finished,
finish_reason, stop), so the message carries finished='abort' (truthy, not True) and finish_reason=True:
the client's response gets finish_reason true instead of "abort". Pass them in order, or by keyword."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "the two are swapped"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "finished and finish_reason are swapped"


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
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, "abort", True, list(req.sampling_params.stop))])
    return True
