"""Remembers the uids it aborted in a mutable default argument (aborted=set()), to answer False for
a uid aborted twice. A default value is made once, when the function is defined, and then shared
by every call on every scheduler: once uid 0 was aborted on one scheduler, a live request uid 0 on
the next (uids start again at 0 for each scheduler, and a server restarted in the same process
starts them again too) is refused, nothing freed and nothing sent. The scheduler already knows
which uids are live: the keys of scheduler.reqs; an aborted request is popped from it, so a second
abort finds nothing there."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"the same uid aborted twice"}
MUST_SAY = "remembers something outside the scheduler"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "state kept outside the scheduler (a module-level or class-level set/dict) carried over"


def abort_request(scheduler, uid, aborted=set()):
    if uid in aborted or uid not in scheduler.reqs:
        return False
    aborted.add(uid)
    req = scheduler.reqs.pop(uid)
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
