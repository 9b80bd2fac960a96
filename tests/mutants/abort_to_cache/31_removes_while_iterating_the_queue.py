"""Finds the request in the waiting queue with a for loop over `scheduler.waiting` and removes it inside the loop
without leaving it. A deque may not change while it is iterated: when the aborted request is not the last one
waiting, the next turn raises "RuntimeError: deque mutated during iteration", and the abort stops half-way: the
request has left reqs and the queue but keeps its row and pages, caches nothing, and nobody is told (this
round's abort/41, carried into the stretch)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: mid chunked prefill"}
MUST_SAY = "deque mutated during iteration"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "loop over a copy of it"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    for r in scheduler.waiting:
        if r is req:
            scheduler.waiting.remove(r)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # A finished request's path fits an aborted one: release() inserts all_ids[:cached_len] in
    # whole pages, frees the duplicates of pages the cache already had and the partial tail,
    # unlocks the prefix once, caches nothing under the naive cache, and waits for a batch in
    # flight. cached_len never counts the newest sampled token, nor a chunk or page not yet run.
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
