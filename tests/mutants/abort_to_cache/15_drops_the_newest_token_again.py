"""Reads "the newest sampled token is not one of them (it has no K/V)" as an instruction and takes
it off itself: `req.cached_len -= 1` before `release(req, cache_it=True)`. But `req.cached_len`
already leaves the newest token out, so one computed token too few is cached: when the computed
tokens end exactly on a page boundary, the last full page (whose K/V is all written) goes to the
free list instead of the prefix cache. Differs e.g. for a 15-token prompt aborted after its first
decode step with page size 4 (cached_len 16): reference caches 4 pages, this answer 3 (and a
mid-prefill request whose chunks end on a page boundary loses its last page likewise)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only", "stretch: generated: 150 schedulers with aborts at any moment"}
MUST_SAY = "one page too few"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never minus one"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.cached_len > 0:
        req.cached_len -= 1  # the newest sampled token has no K/V: leave it out
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
