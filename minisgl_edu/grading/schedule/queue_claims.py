"""Exercise 5's admission: pages counted for requests still in the queue, told apart from an overtake.

Only admitted requests hold a claim on the pool: the running ones and the waiting ones with a row
(part-way through their prompt), plus the one being admitted. An answer that counts every request in
`scheduler.waiting` beside them also counts requests queued behind the new one, which have no row
yet: a request that fits is refused because of requests that come after it. `edges.case_both_orders`
shows the symptom (the head of the queue fits and waits); the probe below confirms it by running the
answer on the same head with and without one large request queued behind it.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import admits, sched

QUEUE_COUNTED = (
    "count the pages of the admitted requests only (running, and waiting ones with a row: req.table_idx >= 0) "
    "plus the new one: the requests queued behind it hold no pages yet and are counted when their turn comes"
)


def _head(behind: bool):
    # Request 0 runs (8 + 900 tokens, 227 pages); request 2 (8 + 40 tokens, 12 pages) fits beside it.
    # Request 1 (40 + 200 tokens, 60 pages) would not fit beside both.
    s = sched()
    decoding(s, 0, 8, max_tokens=900)
    head = waiting(s, 2, 8, max_tokens=40)
    if behind:
        waiting(s, 1, 40, max_tokens=200)
    return s, head


def counts_the_queue_behind(fn) -> str:
    """The sentence that names the mistake when `fn` admits request 2 alone in the queue but refuses it
    with request 1 queued behind it; empty otherwise."""
    if not admits(fn, *_head(False)) or admits(fn, *_head(True)):
        return ""
    return (
        ". With request 0 running and request 2 alone in the queue, your function admits request 2; with "
        "request 1 queued behind it (not admitted, no row) it refuses request 2: it counts the pages of "
        "requests still waiting to be admitted"
    )
