"""Exercise 5: the request limit reached one request early.

`scheduler.max_running = N` lets N requests be admitted at once: try_admit refuses a new one only
when `len(admitted) >= N`, the requests already admitted. An answer that refuses when the admitted
requests *with the new one* reach the limit (`len(admitted) + 1 >= N`) admits at most N - 1, and
with a limit of 1 nobody at all. In the limit case that shows as one request fewer than expected;
in the budget case beside two decoding requests (a limit of 4) as a prefill batch one prompt short,
which reads like a budget the decoding requests took from (mistake 54).

`refuses_one_early` asks the answer a probe of its own, with pages and budget to spare: with a
limit of 2 and nobody admitted it admits the first of two waiting requests (so it admits at all, and
does not count the waiting ones), but with a limit of 1 and nobody admitted, or a limit of 2 and one
request decoding, it refuses a waiting request.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import admits, sched

ONE_EARLY = (
    "(a probe shows where your limit stops: with scheduler.max_running = 2 and nobody admitted you admit a "
    "waiting request, but with max_running = 1 and nobody admitted, or max_running = 2 and one request "
    "decoding, you refuse it: you refuse when the admitted requests plus the new one reach the limit, one "
    "request too early)"
)
ONE_EARLY_HINT = (
    "with scheduler.max_running = N and fewer than N requests admitted, one more may be admitted: refuse only "
    "when len(admitted) >= scheduler.max_running (the requests already admitted, the new one not counted). "
    "Refusing when len(admitted) + 1 reaches the limit admits at most N - 1, and with max_running = 1 nobody ever"
)


def _admits_beside(limit: int, decoders: int, fn, behind: int = 0) -> bool:
    """Whether `fn` admits the first waiting request (5 tokens) with `decoders` requests decoding, `behind`
    more waiting after it, and a request limit of `limit`; pages and budget to spare, 4 page-table rows."""
    s = sched(max_running_requests=limit)
    for uid in range(decoders):
        decoding(s, uid, 5)
    first = waiting(s, decoders, 5)
    for uid in range(decoders + 1, decoders + 1 + behind):
        waiting(s, uid, 5)
    return admits(fn, s, first)


def refuses_one_early(fn) -> bool:
    """Whether `fn` admits below the limit but refuses the request that would reach it exactly. The control
    has a second request waiting behind the first: a count of every live request (scheduler.reqs, the
    waiting ones too) refuses the first there, while a limit reached one early does not."""
    admits_below = _admits_beside(2, 0, fn, behind=1)
    return admits_below and not _admits_beside(1, 0, fn) and not _admits_beside(2, 1, fn)
