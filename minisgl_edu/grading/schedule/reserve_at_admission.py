"""Exercise 5's probe for pages reserved only when a request is admitted, called by
checks._check_item_pages when a prefill item's request holds fewer pages than the item's end needs
and exactly the pages of what it had computed before (pages_for(req.cached_len)).

Every prefill item needs its pages, the continuing chunk of a request part-way through its prompt
(admitted at an earlier step, it holds a row) as much as a new request's first chunk. An answer that
calls cache.reserve inside the admission branch gives the continuing request an item and no pages:
the engine writes that chunk's K/V past its row. The same symptom comes from a reserve with the
wrong argument (reserve(req, chunk) when the chunk is no longer than what is cached), so the probe
confirms it on a scene of its own, where a wrong argument still takes pages: budget 16, pages of 4
tokens, request 0 (10 tokens) has computed its first 4 (it holds 1 page and a row), request 1
(6 tokens) waits, new. The right items are (0, start 4, 6 tokens) and (1, start 0, 6 tokens), after
which request 0 holds 3 pages and request 1 holds 2. An answer whose items are these, whose new
request holds its 2 pages, and whose continuing request still holds only its 1 page reserved for new
requests only. This module imports nothing from checks.py, which calls it.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, SamplingParams, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, token_ids
from minisgl_edu.grading.harness import new_scheduler

RESERVE_ONLY_AT_ADMISSION = (
    "reserve for every item, the continuing request's too, not only when a request is admitted: a request "
    "part-way through its prompt (req.table_idx >= 0, admitted at an earlier step) needs the pages of its next "
    "chunk as well, so call scheduler.cache.reserve(req, start + num_tokens) for each item you add, outside "
    "the branch that admits"
)

RIGHT = [(0, 4, 6), (1, 0, 6)]  # the reference's items on the probe's scene: (uid, start, num_tokens)


def _held_after(fn):
    """The answer's items on the probe's scene and the pages each request holds after it, without the
    checks of `decide`; None if it raises."""
    s = new_scheduler(max_prefill_tokens=16, cache="naive")
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    head = s.add_request(0, token_ids(10, 191), params)
    s.cache.admit(head)
    s.cache.reserve(head, 4)
    apply(s, Batch("prefill", [ScheduledReq(head, 0, 4)]))  # its first chunk done: 1 page, a row
    new = s.add_request(1, token_ids(6, 192), params)
    try:
        items = [(it.req.uid, it.start, it.num_tokens) for it in fn(s).items]
    except Exception:
        return None
    return items, (s.cache.held_pages(head), s.cache.held_pages(new))


def check_reserve_only_at_admission(fn, it: ScheduledReq, held: int, needed: int) -> None:
    """Raise the mistake when `fn` (None: no probe) gives the probe's right items but reserves the new
    request's pages only; `it` is the failing item, whose request holds `held` pages of the `needed`."""
    req = it.req
    if fn is None or _held_after(fn) != (RIGHT, (1, 2)):
        return
    raise Mistake(
        f"request {req.uid} is part-way through its prompt ({req.cached_len} of its {len(req.input_ids)} tokens "
        f"in the cache; it holds a page-table row from an earlier step) and its new chunk, up to position {it.end} "
        f"({needed} pages), got no pages: it holds {held}, the pages of what it had computed before. A probe agrees: request 0, 4 of its 10 tokens "
        "computed, and request 1, new, get the right items, and request 1 holds the pages of its chunk but "
        "request 0 still holds only its 1 page: pages were reserved only for the request being admitted",
        RESERVE_ONLY_AT_ADMISSION,
    )
