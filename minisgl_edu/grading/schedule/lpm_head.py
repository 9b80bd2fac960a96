"""Exercise 5's stretch: the head of the queue kept in place instead of sorted with the rest.

The base part's rule "nobody overtakes" is about admission: the first request (in the order
considered) that does not fit stops the batch. Longest prefix match changes that order for every
request not yet admitted, the first to arrive included. An answer that keeps the first arrival at
the front and sorts only the requests behind it gives the reference's order whenever the first
arrival has the longest cached prefix, and the wrong one otherwise.

`check_head_sorted(fn, batch, want, shown)` is asked by a case whose batch order is wrong: when
that order is the first arrival followed by the rest in longest-prefix order, a control (a second
queue whose first arrival has no cached prefix, and whose prompt lengths give another order) tells
the kept head apart from other sort keys that happen to give the same order in the case's scene.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, lpm_sched

HEAD_KEPT_HINT = (
    "the head of the queue was left in place instead of sorted with the rest: every request not yet admitted, "
    "the first to arrive included, is sorted by len(pages) of scheduler.cache.match(req), most first (only a "
    "request part-way through its prompt keeps going first)"
)


def _order(batch: Optional[Batch]) -> Optional[list[int]]:
    return [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None


def _keeps_the_head(fn) -> bool:
    """The control: requests 0, 1, 2 with 0, 2 and 3 cached prefix pages and prompts of 4, 18 and 14
    tokens. Longest prefix first gives [2, 1, 0], longest prompt first [1, 2, 0], the head kept [0, 2, 1]."""
    s = lpm_sched()
    shared = cached(s, token_ids(12, 70))
    add_waiting(s, 0, token_ids(4, 71), pages=0)
    add_waiting(s, 1, shared[:8] + token_ids(10, 72), pages=2)
    add_waiting(s, 2, shared + token_ids(2, 73), pages=3)
    hide_engine_answer(s)
    try:
        return _order(fn(s)) == [0, 2, 1]
    except Exception:
        return False


def check_head_sorted(fn, batch: Optional[Batch], want: list[int], shown: list[int]) -> None:
    """Raise the kept-head mistake when the batch holds the first arrival (`shown[0]`), which
    longest prefix match does not put first, followed by the others in the order `want` gives them,
    and the control shows the same."""
    got = _order(batch)
    if not got or not shown or got == want or want[0] == shown[0] or got[0] != shown[0]:
        return
    head = shown[0]
    kept = [head] + [u for u in want if u != head]
    if got != kept[: len(got)] or not _keeps_the_head(fn):
        return
    raise Mistake(
        f"request {head} arrived first and yours kept it at the head, {got}, sorting only the requests behind "
        f"it; longest prefix match considers {want}. A second queue shows the same: requests with 0, 2 and 3 "
        "cached prefix pages, yours [0, 2, 1] instead of [2, 1, 0]",
        HEAD_KEPT_HINT,
    )
