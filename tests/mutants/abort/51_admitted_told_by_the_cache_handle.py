"""Decides whether the request holds memory by its cache handle (`req.cache_handle is not None`:
"admission matched and locked a prefix, so it was admitted"). Under the radix cache an admitted
request always has a handle (the root when nothing matched), but the naive cache (`cache="naive"`)
matches and locks nothing, so every handle is None: an aborted request that was prefilling or
decoding keeps its page-table row and all its pages, and they never go back to the free list.
Whether a request holds memory is `req.table_idx >= 0`."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort between schedule() and run_batch()", "abort while its batch is in flight"}
MUST_SAY = "This case runs the naive cache"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "req.cache_handle is None for every request"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.cache_handle is not None:  # admitted: it matched (and locked) a prefix, so it holds memory
        scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
