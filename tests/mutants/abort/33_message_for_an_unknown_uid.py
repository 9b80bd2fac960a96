"""Sends the abort message before it knows the uid is live: for a uid that is not in
`scheduler.reqs` (never seen, finished a moment ago, or aborted already) it still sends
DetokenizeMsg(uid, -1, True, 'abort', []) "in case the detokenizer still holds something", then
returns False. The detokenizer forgot the uid with the request's last message (its finished token,
or the first abort's message): this one is a stray second "finished" for a request the client
already has the end of, or one for a request that never existed. For a uid that is not live, the
abort sends nothing and changes nothing."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"the same uid aborted twice", "unknown or finished uid"}
MUST_SAY = "the uid is not live"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "send nothing and change nothing"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", [])])
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
