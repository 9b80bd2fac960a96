"""Reorders scheduler.waiting, lets the package's own schedule_next_batch build the batch, and puts
the queue back: the order is the student's, the rest of the answer is the package's."""

from __future__ import annotations

from collections import deque

from minisgl_edu.scheduler.scheduler import schedule_next_batch

MUST_FAIL = {"stretch: the longest cached prefix goes first", "stretch: ties keep arrival order"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"

LPM_MAX_WAITING = 8


def schedule_next_batch_lpm(scheduler):
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(scheduler.cache.match(r)[1]), reverse=True)
    scheduler.waiting = deque(started + new)
    try:
        return schedule_next_batch(scheduler)
    finally:
        scheduler.waiting = deque(r for r in waiting if r in scheduler.waiting)
