"""Exercise 5's stretch: the new requests sorted by the matched page list itself, not its length.

`scheduler.cache.match(req)` returns the matched length and the list of cached page ids. An answer
whose sort key is that list (`key=lambda r: cache.match(r)[1]`) still sorts: Python compares lists
element by element, so the order follows the id of each request's first cached page, and only when
one list begins the other does the longer one win. Page ids come from the allocator, in the order
prompts were cached, so such an order changes when the same prompts were cached in the other order.

`sorts_by_page_ids(fn)` plays one scene twice: a 3-page cached prompt and a 1-page one, cached in
one order and then in the other, a request matching each. The longer match goes first both times;
an answer whose order swaps between the two plays reads the page ids, not how many there are.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, lpm_sched

PAGE_IDS = (
    "sort by how many pages match, len(scheduler.cache.match(req)[1]), not by the list of pages itself: lists "
    "compare element by element, so their order follows the page ids, not the length of the cached prefix"
)


def _first(fn, long_cached_first: bool):
    """The uid `fn` puts first: request 0 matches a 1-page cached prompt, request 1 a 3-page one."""
    s = lpm_sched()
    long, short = token_ids(12, 140), token_ids(4, 141)
    for ids in [long, short] if long_cached_first else [short, long]:
        cached(s, ids)  # the prompt cached first gets the lower page ids
    add_waiting(s, 0, short + token_ids(1, 142), pages=1)
    add_waiting(s, 1, long + token_ids(1, 143), pages=3)
    hide_engine_answer(s)
    try:
        batch = fn(s)
    except Exception:
        return None
    return batch.items[0].req.uid if batch is not None and batch.is_prefill and batch.items else None


def sorts_by_page_ids(fn) -> str:
    """The sentence that names the mistake when `fn`'s first request changes with the page ids alone;
    empty otherwise."""
    one, other = _first(fn, True), _first(fn, False)
    if None in (one, other) or one == other:
        return ""
    label = {0: "the 1-page match", 1: "the 3-page match"}
    return (
        ". On a scene of its own, one request matching a 1-page cached prompt and one a 3-page one, yours puts "
        f"{label[one]} first when the 3-page prompt was cached first (lower page ids) and {label[other]} first "
        "when it was cached second (higher page ids): your order follows the page ids, not the number of pages"
    )
