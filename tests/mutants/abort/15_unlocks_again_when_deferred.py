"""Calls release(), and when the release had to wait (the request's batch is in flight on the
overlap loop, so the request still holds its row) unlocks its cached prefix at once, "the prefix is
only read, so its lock can go now". When the batch lands the waiting release unlocks it a second
time: another request reading the same prefix loses its lock (the cache may evict pages it reads),
or the lock count goes below zero."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "given up twice"
CAUGHT_BY = {"generated"}
HINT_SAYS = "given up twice"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    cache.release(req, cache_it=False)
    if req.table_idx >= 0:  # the release waits for the batch in flight
        cache.prefix_cache.unlock(req.cache_handle)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
