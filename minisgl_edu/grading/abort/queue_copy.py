"""Exercise 2's probe for a request removed from a copy of `scheduler.waiting`, called by `checks.check_gone`.

`for queue in (list(scheduler.waiting), scheduler.running): if req in queue: queue.remove(req)` reads
as one loop over both queues, but `list(scheduler.waiting)` is a new list: the request leaves that
copy and stays in the deque, where the next step schedules it again. A request left in
`scheduler.waiting` is also what other mistakes leave (the head skipped, the queue chosen by status
or row), so the probe checks the cause itself: on a scheduler of its own, one request waits; it
aborts it while a profiler notes every list.remove() called, and names this mistake only when the
request stayed in scheduler.waiting and was removed from a list (neither queue) that held exactly
the waiting queue's requests. `left_waiting` asks the head-of-queue probe first, this one next, and
last `own_mark`'s probe of a queue chosen by the status the abort has just set.
"""

from __future__ import annotations

import sys
from typing import Optional

from minisgl_edu.grading.abort.head_of_queue import head_skipped, skips_the_head
from minisgl_edu.grading.abort.own_mark import queue_after_its_own_mark
from minisgl_edu.grading.abort.probes import probe_uid, scheduler_with
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting

FROM_A_COPY = (
    "list(scheduler.waiting) (or .copy(), or [*scheduler.waiting]) is a new list: removing the request from "
    "it leaves scheduler.waiting as it was. Remove it from the deque itself: scheduler.waiting.remove(req)"
)


def removes_from_a_copy(fn) -> bool:
    """`fn`, aborting a waiting request, removes it from a list copied from scheduler.waiting and
    leaves it in scheduler.waiting."""
    s = scheduler_with(fn)
    req = waiting(s, probe_uid(), 5)
    queued = [id(r) for r in s.waiting]
    copies: list[list[int]] = []  # what each list other than the queues held when remove() was called on it

    def note(frame, event, arg) -> None:
        # a C call's arg is the builtin called: for copy.remove(req), a method bound to the copy
        owner = getattr(arg, "__self__", None)
        if event == "c_call" and getattr(arg, "__name__", "") == "remove" and type(owner) is list:
            if owner is not s.running:
                copies.append([id(r) for r in owner])

    before = sys.getprofile()
    sys.setprofile(note)
    try:
        s.abort(req.uid)
    except Exception:
        return False  # some other mistake: the hint of the failed check names it
    finally:
        sys.setprofile(before)
    return queued in copies and any(r is req for r in s.waiting)


def left_waiting(fn, uid: int) -> Optional[Mistake]:
    """Why the request `uid` is still in scheduler.waiting, when a probe confirms the cause."""
    if skips_the_head(fn):
        return head_skipped(uid)
    if removes_from_a_copy(fn):
        return Mistake(
            f"the request (uid {uid}) is still in the waiting queue (scheduler.waiting). Your abort, given a "
            "waiting request on a scheduler of its own, removed it from a list that copied scheduler.waiting "
            "(list(scheduler.waiting)), not from scheduler.waiting itself",
            FROM_A_COPY,
        )
    return queue_after_its_own_mark(fn, uid, "waiting")
