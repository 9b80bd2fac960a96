"""Looks the request up in the waiting queue by position
(`pos = next((i for i, r in enumerate(scheduler.waiting) if r is req), None)`) and removes it with
`if pos: del scheduler.waiting[pos]`, meaning "if it was found". Position 0 is falsy: the head of
the queue (a request alone in the queue, or the one whose chunked prefill is under way) is never
taken out, so it stays in scheduler.waiting after its memory was released and it was marked
finished. Round 35: two waiting requests, the head aborted: reference waiting [2], this answer [1, 2]."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "abort mid chunked prefill", "two aborts in both orders"}
MUST_SAY = "left the head (position 0) there"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "position 0 is a real position in scheduler.waiting"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    pos = next((i for i, r in enumerate(scheduler.waiting) if r is req), None)
    if pos:  # found in the queue
        del scheduler.waiting[pos]
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
