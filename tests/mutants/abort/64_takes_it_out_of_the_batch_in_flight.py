"""Also takes the request out of the batch in flight on the overlap loop ("it left every queue; the
batch should not hand it a token either"). The batch was launched with it: on landing, its tokens are
matched to batch.items by position and batch.reqs are unpinned, so the others get shifted tokens and
the aborted request stays pinned: its release waits for ever (row, pages and prefix lock leak)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while its batch is in flight"}
MUST_SAY = "edited the batch in flight"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not edit the batch in flight"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    batch = scheduler.in_flight_batch  # (overlap loop) the batch being computed now
    if batch is not None:
        batch.items = [it for it in batch.items if it.req is not req]
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
