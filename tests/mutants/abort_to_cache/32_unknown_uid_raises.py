"""Looks the request up with `scheduler.reqs[uid]`, assuming only live uids are aborted. A uid that
just finished, was already aborted or was never seen raises KeyError instead of returning False with
nothing changed (the contract's normal case of a client hanging up as its answer ends)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "your code raised KeyError"
CAUGHT_BY = {"generated"}
HINT_SAYS = "a uid may be unknown, finished or aborted already"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs[uid]
    del scheduler.reqs[uid]
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
