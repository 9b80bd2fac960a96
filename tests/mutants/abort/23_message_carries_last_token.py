"""Puts the request's newest output token in the abort message ("the last token it produced")
instead of next_token=-1 whenever the request has produced one. Every token was already sent to the
detokenizer with the message of the step that sampled it; a real id in the abort message is
detokenized once more, so the client is shown the request's last token a second time. Differs for
the abort of a decoding request: reference message (uid, -1, True, 'abort', stop), this answer's
(uid, <its newest token>, True, 'abort', stop)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while decoding"}
MUST_SAY = "carries next_token="
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an abort message's next_token is -1, never a real id"


def abort_request(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    last = req.output_ids[-1] if req.output_ids else -1
    scheduler.io.send([DetokenizeMsg(uid, last, True, "abort", list(req.sampling_params.stop))])
    return True
