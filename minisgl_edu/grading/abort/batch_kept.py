"""Exercise 2's check that an abort leaves the batch in flight as it was, called by the in-flight cases.

On the overlap loop the batch in flight was launched with the aborted request. When it lands,
`Scheduler.land` unpins `batch.reqs` (a release that waited for the batch happens then) and
matches the tokens that come back to `batch.items` by position. An abort that takes the request
out of `batch.items` ("the batch should not hand it a token") leaves the request pinned for ever,
so the release it asked for never runs (its row, pages and prefix lock leak), and hands the
requests listed after it the tokens of the one before. Nothing needs doing there: the loop skips
a finished request's tokens itself. The check compares the batch in flight (the object, and the
items it lists) right after the abort with what it was just before.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.scheduler import Scheduler

BATCH_KEPT = (
    "do not edit the batch in flight: it was launched with the request, and when it lands it unpins batch.reqs "
    "and matches the tokens that come back to batch.items by position. Without the request there, it stays "
    "pinned (the release you asked for waits for ever) and the requests after it get shifted tokens. Leave the "
    "batch alone: marking the request finished is enough, the loop skips finished requests itself"
)


def batch_in_flight(s: Scheduler) -> tuple[Optional[Any], list[Any]]:
    """The batch in flight and the items it lists, read just before an abort."""
    batch = s.in_flight_batch
    return batch, list(batch.items) if batch is not None else []


def _uids(items: list[Any]) -> list[int]:
    return [it.req.uid for it in items]


def check_batch_kept(s: Scheduler, before: tuple[Optional[Any], list[Any]]) -> None:
    """After the abort: the batch in flight (`before`, from `batch_in_flight`) is still in flight
    and lists the same items, the aborted request's included."""
    batch, items = before
    if batch is None:
        return
    now = s.in_flight_batch
    if now is not batch:
        raise Mistake(
            "your abort changed which batch is in flight: the batch launched with the request is no longer the "
            "one that lands",
            BATCH_KEPT,
        )
    if len(batch.items) != len(items) or any(a is not b for a, b in zip(batch.items, items)):
        raise Mistake(
            f"your abort edited the batch in flight: it listed the requests {_uids(items)} (batch.items) before "
            f"the abort and {_uids(batch.items)} after",
            BATCH_KEPT,
        )
