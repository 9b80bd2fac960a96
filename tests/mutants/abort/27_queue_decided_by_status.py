"""Decides which queue to take the request out of from its status: out of scheduler.waiting only if
it is WAITING, out of scheduler.running only if it is DECODING. A request that schedule() admitted
for a prompt chunk is PREFILLING and still in scheduler.waiting (part-way through a chunked prefill,
or aborted between schedule() and run_batch()): it stays in that queue, finished and with its row
freed, and the next schedule() continues its prompt on a row it no longer has."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort mid chunked prefill", "two aborts in both orders"}
MUST_SAY = "still in the waiting queue"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "whatever its status (WAITING, or PREFILLING once admitted)"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req.status == ReqStatus.WAITING:
        scheduler.waiting.remove(req)
    elif req.status == ReqStatus.DECODING:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
