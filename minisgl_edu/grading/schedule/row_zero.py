"""Exercise 5: row 0 taken for "no row" when the admitted requests are listed.

A request's page-table row is `req.table_idx`: -1 until it is admitted, then the row cache.admit
gave it, and the page table hands out row 0 first. An answer that lists the waiting requests that
hold a row with `r.table_idx > 0` leaves out the one on row 0 (in the grader's cases, most often
the first request admitted in the same decision, or the head part-way through its chunked
prefill): it is missing from the request limit and from the page sum, so one request too many is
admitted. In the limit case that reads like a count of free places taken once before the loop
(mistake 45).

`misses_row_zero` asks the answer a probe of its own, twice: scheduler.max_running is 1, request 1
is part-way through its chunked prefill and request 2 waits, new. With request 1 on row 0 a correct
answer refuses request 2 (the limit is reached); the same scene with request 1 on row 1 (row 0 taken
and given back before it was admitted) too. An answer that admits request 2 only when request 1
holds row 0 does not count a request on row 0.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, ScheduledReq
from minisgl_edu.grading.fixtures import apply, waiting
from minisgl_edu.grading.schedule.checks import admits, sched

ROW_ZERO = (
    "(a probe shows which request your count misses: with scheduler.max_running = 1 and request 1 part-way "
    "through its chunked prefill, request 2 is admitted beside it when request 1 holds page-table row 0, and "
    "refused when request 1 holds row 1: the request on row 0 is not counted as admitted)"
)
ROW_ZERO_HINT = (
    "rows start at 0: req.table_idx is -1 when a request holds no row, and 0 is the first row handed out. List "
    "the admitted waiting requests with r.table_idx >= 0, not > 0, or the one on row 0 is left out of the "
    "request limit and of the page sum"
)


def _head_on_row(row: int):
    """max_running 1; request 1 (16 tokens, 14 computed) waits with page-table row `row` (0 or 1);
    request 2 (8 tokens) waits, new. Plenty of pages: only the limit refuses request 2."""
    s = sched(max_running_requests=1)  # 4 rows: admitting a second request does not fail here
    table = s.cache.page_table
    taken = [table.alloc_row() for _ in range(row)]  # rows below `row`, given back after the admission
    head = waiting(s, 1, 16)
    s.cache.admit(head)
    for r in taken:
        table.free_row(r)
    assert head.table_idx == row, "setup: the head's row"
    s.cache.reserve(head, 14)
    apply(s, Batch("prefill", [ScheduledReq(head, 0, 14)]))
    return s, waiting(s, 2, 8)


def misses_row_zero(fn) -> bool:
    """Whether `fn` admits request 2 beside a head on row 0 but refuses it beside a head on row 1."""
    try:
        return admits(fn, *_head_on_row(0)) and not admits(fn, *_head_on_row(1))
    except Exception:
        return False
