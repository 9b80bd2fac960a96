"""Exercise 5's stretch: the batch admitted in longest-prefix order, then listed in queue order.

The base part's prefill batch lists the first requests of `scheduler.waiting` in that order,
because that is the order it considers them in. Longest prefix match changes the order considered,
and the batch lists the requests in that new order. An answer that considers, admits and chunks the
requests in longest-prefix order, then sorts the batch's items back into queue order, has the right
requests with the right chunks in the wrong order.

`check_listed_in_queue_order(fn, batch, want, shown)` is asked by a case whose batch order is wrong:
when the batch holds the requests of `want`, listed in arrival order, a control tells this apart from
an answer that never sorted (first come, first served gives the same list whenever the budget cuts
nobody): a queue where the token budget cuts the last request considered, so the chunks show which
order the answer admitted in.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, items_of, lpm_sched

QUEUE_ORDER_HINT = (
    "list the batch's items in the order you admitted them, longest cached prefix first: do not sort the "
    "items back into queue order (that rule of the base part holds only because it admits in queue order)"
)

# The control, in arrival order: request 2 (20 tokens, nothing cached), request 0 (2 cached pages, 4
# tokens to compute), request 1 (4 cached pages, 4 to compute), under a budget of 12 tokens. Longest
# prefix match admits 1, 0, then 2's first 4 tokens; first come, first served gives 2 the whole budget.
_ADMITTED = [(1, 16, 4), (0, 8, 4), (2, 0, 4)]  # the reference's batch
_RELISTED = [(2, 0, 4), (0, 8, 4), (1, 16, 4)]  # the same items, in arrival order


def _relists(fn) -> bool:
    s = lpm_sched(budget=12)
    shared = cached(s, token_ids(16, 74))
    add_waiting(s, 2, token_ids(20, 75), pages=0)
    add_waiting(s, 0, shared[:8] + token_ids(4, 76), pages=2)
    add_waiting(s, 1, shared + token_ids(4, 77), pages=4)
    hide_engine_answer(s)
    try:
        return items_of(fn(s)) == ("prefill", _RELISTED)
    except Exception:
        return False


def check_listed_in_queue_order(fn, batch: Optional[Batch], want: list[int], shown: list[int]) -> None:
    """Raise the relisted-batch mistake when the batch holds `want`'s requests in the arrival order
    `shown`, and the control shows chunks admitted in longest-prefix order, listed in arrival order."""
    got = [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None
    if not got or got == want or sorted(got) != sorted(want) or got != [u for u in shown if u in want]:
        return
    if not _relists(fn):
        return
    raise Mistake(
        f"your prefill batch holds the right requests, listed in arrival order {got}; longest prefix match "
        f"lists them in the order it admits them, {want}. A second queue shows yours admits in that order and "
        "then relists: requests 2 (nothing cached, 20 tokens), 0 (2 cached pages) and 1 (4 cached pages) "
        f"under a budget of 12 tokens, the batch (uid, start, tokens) should be {_ADMITTED}, yours is {_RELISTED}: the chunks are "
        "longest prefix match's, the order is the queue's",
        QUEUE_ORDER_HINT,
    )
