"""Caches what the request computed and sets req.finish_reason = 'abort', but leaves req.status as
it was (WAITING, PREFILLING or DECODING). A batch that schedule() chose before the abort still
lists the request, and run_batch() and the overlap loop skip only finished requests: the engine
runs it again with its row and pages already given back (an IndexError in run_batch, or K/V
written into pages the cache now owns). An abort marks the request like any finished one:
req.status = ReqStatus.FINISHED and req.finish_reason = 'abort'."""

from __future__ import annotations

from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only", "stretch: between schedule() and run_batch()"}
MUST_SAY = "not marked finished"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "mark it finished: req.status = ReqStatus.FINISHED"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=True)
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
