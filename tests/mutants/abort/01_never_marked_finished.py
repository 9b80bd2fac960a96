"""Removes the request everywhere, frees its memory and tells the detokenizer, but never marks it
finished. Harmless between two steps; but a batch scheduled before the abort still holds the
request, and run_batch() then runs it with its pages gone (the stepper and the overlap loop abort
exactly there)."""

from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort between schedule() and run_batch()"}
MUST_SAY = "not marked finished"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "mark it finished"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
