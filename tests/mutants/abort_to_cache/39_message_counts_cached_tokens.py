"""Sends the abort message with `cached_tokens=req.cached_len`, "the tokens it just handed to the prefix
cache". cached_tokens is the usage's prompt-cache hit (the prefix the request got from the cache when it
was admitted), and the abort message must not repeat or change it; cached_len counts every computed token,
so the client's usage reports the request's own computed prompt and output as cached."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only"}
MUST_SAY = "carries cached_tokens="
CAUGHT_BY = {"hand"}
HINT_SAYS = "cached_tokens is the prefix hit reported in the usage"


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
    scheduler.io.send(
        [DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop), cached_tokens=req.cached_len)]
    )  # the tokens now in the cache
    return True
