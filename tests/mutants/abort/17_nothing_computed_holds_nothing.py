"""Gives back memory only when the request has computed something past its cached prefix
(`req.cached_len > req.prefix_len`), "a request that computed nothing holds nothing of its own".
A request whose first chunk schedule() has just chosen (aborted before run_batch()) has computed
nothing yet, but it was admitted: it holds a row, a lock on its cached prefix and the pages
reserved for that chunk, and they leak."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "reserved by schedule()"
CAUGHT_BY = {"generated"}
HINT_SAYS = "reserved by schedule()"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.cached_len > req.prefix_len:
        scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
