"""Exercise 2's probe for one `try` around both removes, called by `checks.check_gone`.

`try: waiting.remove(req); running.remove(req) except ValueError: pass` looks as if it takes the
request out of whichever queue holds it. It does for a waiting request; for a decoding one the
first remove raises ValueError, the except swallows it, and the second remove never runs: the
request stays in `scheduler.running`. A request left in `scheduler.running` is also what an abort
that never touches that list leaves, so the probe checks the cause itself: on a scheduler of its
own, it aborts one decoding request with a `scheduler.waiting` that records each remove() that
raised, and names this mistake only when waiting.remove(req) raised for that request, the abort
still returned, and the request is still in `scheduler.running`. `left_running` asks it first, then
`own_mark`'s probe of a queue chosen by the status the abort has just set.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.abort.own_mark import queue_after_its_own_mark
from minisgl_edu.grading.abort.probes import MissDeque, probe_uid, scheduler_with
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding

ONE_TRY = (
    "one try around both removes stops at the first: for a decoding request scheduler.waiting.remove(req) "
    "raises ValueError, the except swallows it, and the scheduler.running.remove(req) after it never runs. "
    "Give each queue its own test (if req in scheduler.waiting: ... else: scheduler.running.remove(req)) "
    "or its own try"
)


def stops_at_waiting_remove(fn) -> bool:
    """`fn`, aborting a decoding request, calls scheduler.waiting.remove(req), catches the ValueError
    it raises, and leaves the request in scheduler.running."""
    s = scheduler_with(fn)
    uid = probe_uid()
    req = decoding(s, uid, 6)
    s.waiting = MissDeque(s.waiting)
    try:
        s.abort(uid)
    except Exception:
        return False  # it did not swallow the error: the failed check's own hint stands
    return any(r is req for r in s.waiting.not_found) and any(r is req for r in s.running)


def one_try_mistake(uid: int) -> Mistake:
    return Mistake(
        f"the request (uid {uid}) is still in the running set (scheduler.running). Your abort, given a decoding "
        "request on a scheduler of its own, called scheduler.waiting.remove(req), which raised ValueError (the "
        "request is not waiting); your code caught it and went on, and the request stayed in scheduler.running",
        ONE_TRY,
    )


def left_running(fn, uid: int) -> Optional[Mistake]:
    """Why the request `uid` is still in scheduler.running, when a probe confirms the cause."""
    if stops_at_waiting_remove(fn):
        return one_try_mistake(uid)
    return queue_after_its_own_mark(fn, uid, "running")
