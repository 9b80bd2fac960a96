"""Gives back memory only for a request that is decoding (req.status == ReqStatus.DECODING), taking
a request in the waiting queue for one that holds nothing yet. A request part-way through a
chunked prefill is still in scheduler.waiting (status PREFILLING) but already has a page-table row
and the pages of the chunks that ran: they leak."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort mid chunked prefill", "two aborts in both orders"}
MUST_SAY = "gave back nothing of what it held"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "a request still in scheduler.waiting part-way through a chunked prefill holds a row and pages too"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.status == ReqStatus.DECODING:
        scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
