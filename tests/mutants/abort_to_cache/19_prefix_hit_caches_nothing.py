"""Caches the request's pages only when it was admitted without a prefix hit
(`cache_it=req.prefix_len == 0`), reasoning that "a request that started from a prefix hit has its
prompt in the cache already". The prefix is, but what the request computed past it (the rest of
its prompt, its output) is not: the contract caches the full pages of the first cached_len tokens
and frees only the duplicates. A request admitted on a cached prefix that then computed more full
pages has those pages freed by this answer instead of cached, and a new request with the same
tokens finds only the old prefix."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: after a cached prefix"}
MUST_SAY = "none of the request's computed pages went into the prefix cache"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "cache what the request computed"


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
    # a prefix hit: its prompt is in the cache already, nothing to add
    scheduler.cache.release(req, cache_it=req.prefix_len == 0)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
