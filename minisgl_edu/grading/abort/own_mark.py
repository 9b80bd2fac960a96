"""Exercise 2's probe for a release guarded by the status the abort has just set, called by `checks`.

`req.status = ReqStatus.FINISHED` and then `if req.status != ReqStatus.FINISHED: release(...)` reads as a
guard against releasing a request twice, but the test runs after the marking, so it is always false
and no aborted request gives back its row, its pages or its lock. A row left in use is also what an
abort that never calls release(), or tests the row or the queue wrongly, leaves, so the probe checks
the cause itself: on a scheduler of its own it aborts a decoding request twice over, once as it is and
once as a request whose status does not take the value FINISHED, and names this mistake only when the
first abort called no release() and the second did. The row-0 probe is asked here too, first: both
explain a row that was kept.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Req, ReqStatus
from minisgl_edu.grading.abort.probes import probe_uid, row_zero, scheduler_with, skips_row_zero
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding

GUARDED = (
    "release before you mark the request finished, or with no guard at all: a test of req.status placed after "
    "req.status = ReqStatus.FINISHED is always false, so release() never runs. A uid still in scheduler.reqs "
    "is live and was never released, so it needs no guard against a second release"
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


def _releases(fn, never_finished: bool) -> int:
    """How many times `fn` calls release() aborting a decoding request; -1 when it raises."""
    s = scheduler_with(fn)
    req = decoding(s, probe_uid(), 6)
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
        return -1  # some other mistake: the hint of the failed check names it
    return len(calls)


def guarded_by_its_own_mark(fn) -> bool:
    """`fn` releases a decoding request only when the status it wrote did not take."""
    return _releases(fn, False) == 0 and _releases(fn, True) > 0


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
