"""Does not call release() when the request is in the batch in flight on the overlap loop ("its pages
must wait for the batch to land; the loop gives them back then"). Nothing gives them back: the
cache manager only defers a release it was asked for (release() on a pinned request queues itself
until unpin). The contract: none of the pages goes back before the batch lands, "then they all
do". After an abort in flight and the batch landing, this answer's request still holds its page-
table row and every page (a leak of the row and all its own pages, and its lock on the cached
prefix stays), where the reference's are free."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while its batch is in flight"}
MUST_SAY = "asked for no release of the request whose batch is in flight"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "call scheduler.cache.release(req, cache_it=False) while its batch is in flight too"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    batch = scheduler.in_flight_batch
    if batch is None or all(it.req is not req for it in batch.items):
        scheduler.cache.release(req, cache_it=False)  # in flight: the loop frees it when the batch lands
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
