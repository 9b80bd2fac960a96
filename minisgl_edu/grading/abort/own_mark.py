"""Exercise 2's probes for a test of the status the abort has just set, called by `checks` and the queue probes.

`req.status = ReqStatus.FINISHED` and then a test of req.status reads the status the abort wrote, not
the one the request had. Two answers make that slip:

* `if req.status != ReqStatus.FINISHED: release(...)` reads as a guard against releasing a request
  twice, but it is always false: no aborted request gives back its row, its pages or its lock.
* marking first and then choosing the queue by status (`if req.status == ReqStatus.WAITING: waiting.remove
  ... elif req.status == ReqStatus.DECODING: running.remove`) finds neither: the request stays queued.

A row left in use, or a request left in a queue, is also what other mistakes leave (no release, the row
tested wrongly, the head of the queue taken), so the probes check the cause itself: on a scheduler of
its own they abort the same kind of request twice over, once as it is and once as a request whose
status does not take the value FINISHED, and name the slip only when the first abort did not do the
thing (call release(), empty the queue) and the second did. The row-0 probe is asked first for a kept
row: both explain it.
"""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req, ReqStatus
from minisgl_edu.grading.abort.probes import probe_uid, row_zero, scheduler_with, skips_row_zero
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, waiting

GUARDED = (
    "release before you mark the request finished, or with no guard at all: a test of req.status placed after "
    "req.status = ReqStatus.FINISHED is always false, so release() never runs. A uid still in scheduler.reqs "
    "is live and was never released, so it needs no guard against a second release"
)
QUEUE_AFTER_MARK = (
    "take the request out of its queue before you mark it finished, or test the queue itself (if req in "
    "scheduler.waiting: ...): the queue chosen by a test of req.status placed after req.status = "
    "ReqStatus.FINISHED is neither, since the status it reads is FINISHED"
)


class _NeverFinished(Req):
    """A request whose status keeps its value when FINISHED is written to it."""

    @property
    def status(self) -> ReqStatus:
        return self.__dict__["status"]

    @status.setter
    def status(self, value: ReqStatus) -> None:
        if value is not ReqStatus.FINISHED:
            self.__dict__["status"] = value


def _abort_as(fn, make: Callable, never_finished: bool):
    """Abort a request made by `make` (fixtures.waiting or decoding) with `fn` on a scheduler of its own.
    Returns (scheduler, request, release() calls), or None when the abort raises."""
    s = scheduler_with(fn)
    req = make(s, probe_uid(), 6)
    if never_finished:
        req.__class__ = _NeverFinished
    inner, calls = s.cache.release, []

    def release(r, cache_it: bool = True) -> None:
        calls.append(r)
        return inner(r, cache_it)

    s.cache.release = release
    try:
        s.abort(req.uid)
    except Exception:
        return None  # some other mistake: the hint of the failed check names it
    return s, req, calls


def guarded_by_its_own_mark(fn) -> bool:
    """`fn` releases a decoding request only when the status it wrote did not take."""
    marked, unmarked = _abort_as(fn, decoding, False), _abort_as(fn, decoding, True)
    return marked is not None and unmarked is not None and not marked[2] and len(unmarked[2]) > 0


def _left_queued(fn, make: Callable, never_finished: bool) -> Optional[bool]:
    """Whether the request is still in scheduler.waiting or scheduler.running after `fn` aborts it."""
    done = _abort_as(fn, make, never_finished)
    if done is None:
        return None
    s, req, _ = done
    return any(r is req for r in (*s.waiting, *s.running))


def queue_after_its_own_mark(fn, uid: int, where: str) -> Optional[Mistake]:
    """A Mistake (about the case's request `uid`) when `fn` leaves a request of `where` ("waiting" or "running") in its queue, and takes it
    out when its status does not become FINISHED: the queue is chosen by the status it has just set."""
    make = waiting if where == "waiting" else decoding
    if not (_left_queued(fn, make, False) and _left_queued(fn, make, True) is False):
        return None
    queue = "the waiting queue (scheduler.waiting)" if where == "waiting" else "the running set (scheduler.running)"
    was = "WAITING" if where == "waiting" else "DECODING"
    return Mistake(
        f"the request (uid {uid}) is still in {queue}. Your abort, given a {was} request on a scheduler of its own, left it "
        f"there; given the same request with a status that stays {was} when FINISHED is written to it, it took "
        "it out: your code chooses the queue by a test of req.status that runs after it marked the request finished",
        QUEUE_AFTER_MARK,
    )


def row_kept(s, row: int) -> Optional[Mistake]:
    """Why the request's row `row` is still in use, when a probe confirms the cause."""
    if row == 0 and skips_row_zero(s.abort_fn):
        return row_zero(row)
    if guarded_by_its_own_mark(s.abort_fn):
        return Mistake(
            f"the request's page-table row ({row}) was not given back. Your abort, given a decoding request on a "
            "scheduler of its own, called no release(); given the same request with a status that stays DECODING "
            "when FINISHED is written to it, it did: your release is guarded by a test of req.status that runs "
            "after your abort marked the request finished",
            GUARDED,
        )
    return None
