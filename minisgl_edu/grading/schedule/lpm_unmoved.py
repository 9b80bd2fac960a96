"""Exercise 5's stretch: a sort that moves nothing, the queue coming back in arrival order.

Longest prefix match reorders the requests not yet admitted by their cached prefix pages. An answer
whose sort never moves a request gets the arrival order, the same as first come, first served. The
usual way to get there is a comparator for `functools.cmp_to_key` that returns a bool
(`cached(a) > cached(b)`): the sort asks only whether `cmp(a, b) < 0`, and True (1) and False (0) are
never negative, so no request ever goes before another. A key that is the same for every request
(the length of match()'s pair, say) or a sorted copy left unused does the same.

`check_reordered(fn, batch, want, shown, what)` is asked by a case whose batch came back in the
arrival order `shown` where `want` differs: a control (a queue whose arrival order is neither the
longest-first nor the shortest-first order) tells "nothing moved" apart from a sort the wrong way
round, which gives arrival order in the case's own scene (there the arrivals have ever more pages).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, lpm_sched, pages_of, show

UNMOVED_HINT = (
    "your sort moved nothing: the requests came back in arrival order. A comparator for functools.cmp_to_key "
    "must return a negative number (a goes before b), zero or a positive one; a bool such as cached(a) > "
    "cached(b) is 1 or 0, never negative, so it never puts a request before another. Simpler: sort the "
    "requests not yet admitted by len(pages) of scheduler.cache.match(req), largest first, with key= and "
    "reverse=True (a stable sort: ties keep arrival order), and walk the sorted list"
)

# The control, in arrival order: requests 0, 1, 2 with 2, 0 and 4 cached prefix pages. Longest prefix
# match considers [2, 0, 1]; shortest first [1, 0, 2]; a sort that moves nothing [0, 1, 2].
_CONTROL_PAGES = [2, 0, 4]
_UNMOVED = [0, 1, 2]


def _moves_nothing(fn) -> bool:
    """Whether the answer takes the control queue in arrival order, as only a sort that moves nothing does."""
    s = lpm_sched()
    shared = cached(s, token_ids(16, 80))  # 4 pages of 4 tokens
    add_waiting(s, 0, shared[:8] + token_ids(3, 81), pages=2)
    add_waiting(s, 1, token_ids(5, 82), pages=0)
    add_waiting(s, 2, shared + token_ids(3, 83), pages=4)
    hide_engine_answer(s)
    try:
        batch = fn(s)
    except Exception:
        return False
    got = [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None
    return got == _UNMOVED


def check_reordered(fn, batch: Optional[Batch], want: list[int], shown: list[int], s, what: str) -> None:
    """Raise the moved-nothing mistake when the batch lists the requests in arrival order `shown` where
    longest prefix match wants `want`, and the control queue also comes back in arrival order."""
    got = [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None
    if not got or got == want or got != shown[: len(got)] or want[: len(got)] == shown[: len(got)]:
        return
    if not _moves_nothing(fn):
        return
    raise Mistake(
        f"{what}: the prefill batch should hold requests {want} in that order, yours is {show(batch)} (cached "
        f"prefix pages, in arrival order: {pages_of(s, shown)}). Yours kept the arrival order, and does so again "
        f"on a second queue, requests 0, 1, 2 with {_CONTROL_PAGES} cached prefix pages: {_UNMOVED} instead of "
        "[2, 0, 1]. Your sort moved no request at all",
        UNMOVED_HINT,
    )
