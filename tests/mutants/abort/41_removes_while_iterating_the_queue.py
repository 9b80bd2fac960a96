"""Finds the request in the waiting queue with a for loop over `scheduler.waiting` and removes it inside the
loop, without leaving the loop. A deque may not change while it is iterated: when the aborted request is not
the last one waiting, the next turn of the loop raises "RuntimeError: deque mutated during iteration", and the
abort stops half-way (the request is gone from the queue but still holds its row and pages, and nobody is told)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "deque mutated during iteration"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "loop over a copy of it"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    for r in scheduler.waiting:
        if r is req:
            scheduler.waiting.remove(r)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
