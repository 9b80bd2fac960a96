"""Caches nothing when the request's batch is still in flight on the overlap loop (release with
cache_it=False then), reasoning that K/V still being computed must not reach the prefix cache.
But cached_len only ever counts tokens whose K/V is already written, and release() waits for the
batch anyway, so the tokens the request had computed before that batch are lost to the cache."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: its batch in flight"}
MUST_SAY = "none of the request's computed pages"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "release(req, cache_it=True) files its computed full pages"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    batch = scheduler.in_flight_batch
    in_flight = batch is not None and any(it.req is req for it in batch.items)
    # pages under a batch that is still computing: do not hand them to the cache
    scheduler.cache.release(req, cache_it=not in_flight)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
