"""Sets the finish reason to 'aborted' (on the request and in the DetokenizeMsg) instead of 'abort'.
The finish reason is one of a fixed set of words ('stop', 'length', 'abort') that the server and
the client compare against: 'aborted' is none of them, so the response reports an unknown reason.
An abort sets req.finish_reason = 'abort' and sends 'abort' in its message."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {
    "abort while waiting",
    "abort mid chunked prefill",
    "abort while decoding",
    "abort between schedule() and run_batch()",
    "abort while its batch is in flight",
    "abort with a cached prefix",
    "abort while others hold its cached prefix",
    "abort at a page boundary and one token past it",
    "two aborts in both orders",
    "abort after many requests",
    "the same uid aborted twice",
}
MUST_SAY = "req.finish_reason is 'aborted', expected 'abort'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "req.finish_reason = 'abort'"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "aborted"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "aborted", list(req.sampling_params.stop))])
    return True
