"""Caches only the computed part of the PROMPT: it lowers req.cached_len to at most
len(req.input_ids) before release(req, cache_it=True), reasoning that "a client that retries the same
prompt" reuses the prompt's pages and that the output is the model's, not worth keeping. The
contract caches the full pages of every computed token of req.all_ids, output included ("or resends
the conversation so far"). A decoding request with a 9-token prompt (pages of 4) that has computed
7 output tokens (cached_len 16) should leave 4 pages in the prefix cache; this answer leaves 2 and
frees the pages that hold output tokens."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only", "stretch: after a cached prefix"}
MUST_SAY = "only the prompt's"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the output tokens computed so far count too"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    req.cached_len = min(req.cached_len, len(req.input_ids))  # the prompt is what a retry sends again
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
