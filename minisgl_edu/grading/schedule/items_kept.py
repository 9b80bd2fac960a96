"""Exercise 5's decision: a batch already returned, watched across the next decision (base part).

The engine's overlap loop schedules step n+1 while the batch of step n is still on the GPU, and
matches its results to the requests by that batch's items afterwards. A decision that keeps one
list of items (module-level, or on the scheduler) and clears and refills it every call returns the
same list in every Batch: the next call rewrites the items of the batch still in flight. A case
that takes several decisions keeps the batch of the last one and checks, after the next call, that
its items are still the ones it was returned with. The mistake is named only when the two batches
really hold the same list object.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake

ITEMS_SHARED = (
    "build a new list of items for every batch (items = [] inside the function, each call): a Batch you "
    "returned is still in flight (the overlap loop runs it while the next step is scheduled), so the next "
    "call must not clear or refill its items"
)


def items_seen(batch: Optional[Batch]) -> Optional[list]:
    """The items of `batch` as values, to compare after the next decision."""
    if batch is None:
        return None
    return [(it.req.uid, it.start, it.num_tokens) for it in batch.items]


def check_items_kept(prev: Optional[Batch], seen: Optional[list], batch: Optional[Batch], step: int) -> None:
    """`prev`: the batch of decision `step`, `seen`: its items_seen() when returned, `batch`: the next one."""
    if prev is None or items_seen(prev) == seen:
        return
    now = items_seen(prev)
    if batch is not None and prev.items is batch.items:
        raise Mistake(
            f"your step {step} returned a batch with items {seen}; after your step {step + 1} that same batch "
            f"holds {now}: both batches share one list of items, which the next call cleared and refilled",
            ITEMS_SHARED,
        )
    raise Mistake(
        f"your step {step} returned a batch with items {seen}; after your step {step + 1} that same batch "
        f"holds {now}: the next decision changed a batch already returned",
        "never change a Batch (or its items) once returned: the overlap loop still runs it while the next "
        "step is scheduled; build new ScheduledReq items in a new list every call",
    )
