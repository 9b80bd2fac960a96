"""Clamps the computed length "so the newest sampled token is never counted":
req.cached_len = min(req.cached_len, len(req.all_ids) - 1) before release(cache_it=True). While
decoding that changes nothing, but a request with no output yet has no sampled token: on the overlap
loop its last prompt chunk in flight already counts (launch moved cached_len to the prompt's end), and
the clamp drops a prompt token whose K/V the batch writes, so a prompt of whole pages caches one too few."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: its last prompt chunk in flight"}
MUST_SAY = "was aborted while the last chunk of its prompt was in flight"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the last id of all_ids is a prompt token, not a sampled one"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # the newest sampled token (the last of all_ids) has no K/V yet: never count it
    req.cached_len = min(req.cached_len, len(req.all_ids) - 1)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
