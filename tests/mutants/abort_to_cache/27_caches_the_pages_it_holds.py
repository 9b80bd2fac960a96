"""Counts every token slot of the pages the request's row holds as computed: cached_len is raised
to held pages x page_size (at most all but the newest token) before release(). schedule() reserves
pages for a chunk or step that has not run yet, so pages whose K/V was never written go into the
prefix cache, and a later request that matches them reads garbage."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: mid chunked prefill", "stretch: between schedule() and run_batch()"}
MUST_SAY = "page(s) too many went into the prefix cache"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not the prompt's length or the pages the row holds"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.table_idx >= 0:
        held = scheduler.cache.held_pages(req) * scheduler.cache.page_size
        req.cached_len = max(req.cached_len, min(len(req.all_ids) - 1, held))
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
