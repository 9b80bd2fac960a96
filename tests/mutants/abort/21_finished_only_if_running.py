"""Marks the request FINISHED only when it was taken out of scheduler.running ("a waiting request
never started, so it stays WAITING; finish_reason says it was aborted"). The contract: after
abort_request returns True, req.status == ReqStatus.FINISHED wherever the request was. A request
still in scheduler.waiting keeps WAITING (or PREFILLING): a batch that schedule() chose before the
abort (its first or next prompt chunk) still lists it and run_batch() computes it on a freed row,
and the other answers of an n > 1 request that wait for an aborted leader (prompt_sharing.waits:
leader still WAITING/PREFILLING) wait for ever. Differs for any abort of a waiting request:
reference status FINISHED, this answer WAITING."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting", "abort mid chunked prefill"}
MUST_SAY = "is not marked finished"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "mark it finished wherever it was, the waiting queue included"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    was_running = req in scheduler.running
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if was_running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    if was_running:
        req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
