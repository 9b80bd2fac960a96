"""Throws the request's answer away before releasing it (`req.output_ids.clear()`: "the client will never see
these tokens"), then releases with cache_it=True. release() caches `req.all_ids[:req.cached_len]`, and all_ids is
the prompt plus the output: with the output gone, only the prompt's full pages can be filed, so the pages the
request computed for its output go to the free list and a client that resends the conversation misses them."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only"}
MUST_SAY = "emptied req.output_ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not empty or cut req.output_ids"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.output_ids.clear()  # aborted: its answer is not delivered
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
