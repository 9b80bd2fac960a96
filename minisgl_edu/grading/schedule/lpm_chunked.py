"""Exercise 5's stretch: the requests not yet admitted are sorted also while a chunked prefill is
under way. The one check here (`sorted_behind_a_chunk`, part of the case "only new requests are
reordered") sets a request part-way through its prompt at the head of the queue and two new
requests behind it, in arrival order the one with nothing cached first: the batch must finish the
chunked prompt, then take the new requests by cached pages. An answer that sorts only when no
request is part-way through its prompt is named, after a control: the same two new requests, alone,
in the order it gives them.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, decide_in_order, items_of, lpm_sched, show, show_expected
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule_next_batch


def _behind_a_chunk(chunked: bool) -> Scheduler:
    """Request 1 (nothing cached) and request 2 (6 cached pages) wait, with budget 16; with `chunked`,
    request 0 (40 tokens, nothing cached) arrived first and has had two 16-token chunks."""
    s = lpm_sched(budget=16)
    shared = cached(s, token_ids(24, 140))
    if chunked:
        add_waiting(s, 0, token_ids(40, 23), pages=0)
        for _ in range(2):
            apply(s, package_schedule_next_batch(s))  # only request 0 waits: any order
    add_waiting(s, 1, token_ids(4, 24), pages=0)
    add_waiting(s, 2, shared + token_ids(4, 25), pages=6)
    return s


def sorted_behind_a_chunk(fn) -> None:
    """A request part-way through its prompt at the head of the queue does not turn the order off:
    the requests not yet admitted behind it are still sorted."""
    s = _behind_a_chunk(chunked=True)
    batch = decide_in_order(fn, s)
    want = ("prefill", [(0, 32, 8), (2, 24, 4), (1, 0, 4)])
    if items_of(batch) == want:
        return
    what = (
        "request 0 is part-way through its 40-token prompt (32 tokens done, it holds a page-table row); behind "
        "it wait request 1 (nothing cached) and request 2 (6 cached prefix pages), in that order. Request 0's "
        "last 8 tokens go first, then the new requests by cached pages: 2, then 1. Expected "
        f"{show_expected(want)}, got {show(batch)}"
    )
    alone = _behind_a_chunk(chunked=False)
    if items_of(batch) == ("prefill", [(0, 32, 8), (1, 0, 4), (2, 24, 4)]) and items_of(decide_in_order(fn, alone)) == (
        "prefill",
        [(2, 24, 4), (1, 0, 4)],
    ):
        raise Mistake(
            f"{what}. Without request 0 yours does put request 2 first: a request part-way through its "
            "prompt turned the longest-prefix order off",
            "a request part-way through its prompt goes first, and the requests not yet admitted behind it are "
            "still sorted by cached pages, most first: sort them whether or not a chunked prefill is under way",
        )
    raise AssertionError(what)
