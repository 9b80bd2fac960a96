"""Sends the DetokenizeMsg before marking the request, and takes its finish_reason from the request
(`DetokenizeMsg(uid, -1, True, req.finish_reason, ...)`): at that moment the request has no reason
yet, so the message goes out with finish_reason=None. The detokenizer passes that reason on to the
API server, which then never tells the client the request was aborted (a finished stream without a
reason). Marking the request afterwards changes nothing: the message was sent already. Differs for
any abort of a live request: reference message (uid, -1, True, 'abort', stop), this answer's
(uid, -1, True, None, stop)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while waiting"}
MUST_SAY = "the message's finish_reason is None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a message built from req.finish_reason before the request is marked carries None"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    scheduler.io.send([DetokenizeMsg(uid, -1, True, req.finish_reason, list(req.sampling_params.stop))])
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    return True
