"""Exercise 5's stretch: the LPM_MAX_WAITING threshold turned the wrong way round.

Longest prefix match sorts the waiting requests while few of them wait, and falls back to first come,
first served only when more than LPM_MAX_WAITING wait (matching a long queue every step costs too
much). An answer that writes the test the other way, `len(waiting) > LPM_MAX_WAITING`, serves a short
queue in arrival order and sorts only a long one: every small scene shows first come, first served,
the same as an answer that never sorts.

`check_threshold_reversed(fn, batch, want, shown, max_waiting)` is asked by a case whose short queue
came back in arrival order: a control of its own, max_waiting + 1 requests where only the last to
arrive has a cached prefix, tells the reversed test apart. First come, first served (and the reference)
put request 0 first there; an answer that sorts only above the threshold puts the last one first.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, lpm_sched

REVERSED_HINT = (
    "your LPM_MAX_WAITING test is the wrong way round: sort by len(pages) of scheduler.cache.match(req) while "
    "len(scheduler.waiting) <= LPM_MAX_WAITING, and take the queue first come, first served only when MORE "
    "than LPM_MAX_WAITING requests wait"
)


def _order(batch: Optional[Batch]) -> Optional[list[int]]:
    return [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None


def _sorts_a_long_queue(fn, max_waiting: int) -> bool:
    """The control: max_waiting + 1 requests wait, only the last with a cached prefix (2 pages).
    Whether the answer puts that last request first, as only a sort can."""
    s = lpm_sched()
    shared = cached(s, token_ids(8, 130))
    for uid in range(max_waiting):
        add_waiting(s, uid, token_ids(5, 131 + uid), pages=0)
    add_waiting(s, max_waiting, shared + token_ids(3, 150), pages=2)
    hide_engine_answer(s)
    try:
        got = _order(fn(s))
    except Exception:
        return False
    return bool(got) and got[0] == max_waiting


def check_threshold_reversed(fn, batch: Optional[Batch], want: list[int], shown: list[int], max_waiting: int) -> None:
    """Raise the reversed-threshold mistake when a short queue's batch is in arrival order `shown`
    (longest prefix match wants `want`) and the control shows the answer sorts a long queue."""
    got = _order(batch)
    if not got or got == want or got != shown[: len(got)] or len(shown) > max_waiting:
        return
    if not _sorts_a_long_queue(fn, max_waiting):
        return
    n = max_waiting + 1
    raise Mistake(
        f"{len(shown)} requests wait and yours took them in arrival order, {got}; longest prefix match considers "
        f"{want}. A second queue shows yours does sort when more wait: {n} requests, only the last (request "
        f"{n - 1}) with a cached prefix, and yours puts request {n - 1} first, where more than LPM_MAX_WAITING = "
        f"{max_waiting} waiting means first come, first served (request 0 first). Yours sorts only above the "
        "threshold: the test is the wrong way round",
        REVERSED_HINT,
    )
