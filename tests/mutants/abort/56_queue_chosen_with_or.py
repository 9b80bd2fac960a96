"""Picks the queue to take the request out of with `queue = scheduler.waiting or scheduler.running`,
meant as "whichever queue holds it". `or` gives the first non-empty queue, not the one that holds
the request: a running request aborted while any other request waits stays in scheduler.running,
finished but still decoded-for and counted."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"the same uid aborted twice", "generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "scheduler.running"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "take the aborted request out of scheduler.running"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    queue = scheduler.waiting or scheduler.running  # the queue that holds it
    if req in queue:
        queue.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
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
