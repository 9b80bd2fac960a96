"""Exercise 5's probe for an admission count that reads a request's held pages from its length,
pages_for(r.total_len, page_size), instead of cache.held_pages(r); called by
edges.case_memory_margins when a request one page short is admitted.

A request holds the pages reserved for it so far, and that is not what its length says: a request
just admitted holds none of its prompt yet (its chunk is reserved after try_admit), and a decoding
request's newest token gets its page only at the next decode step. Both are credited as held, so the
need comes out too low and a request is admitted that cannot finish.

The probe asks by how many pages request 1 may be short and still be admitted (the answer's slack),
beside running request 0: with request 1's prompt of 6 tokens (2 pages), of 13 (4 pages), and of 6
again once request 0's length is 13, one past a page boundary (it holds 3 pages, its length says 4).
Only an answer whose slack is 2, 4 and 3 is named: a count that credits the prompt's pages
(len(r.input_ids)) has slack 2 in the third scene. A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, ScheduledReq
from minisgl_edu.grading.fixtures import apply, decoding, waiting
from minisgl_edu.grading.schedule.checks import admits, sched

HELD_FROM_TOTAL_LEN = (
    "ask the cache what each request holds, cache.held_pages(r), not pages_for(r.total_len, page_size): a "
    "request just admitted holds none of its prompt's pages yet, and a decoding request's newest token gets "
    "its page only at the next decode step"
)


def _short(prompt: int, outputs: int, short: int):
    """Request 0 runs (9 + 504 = 513 tokens, 129 pages, 3 held) with `outputs` tokens out; request 1
    waits with a `prompt`-token prompt, its run `short` pages more than the 127 left for it."""
    s = sched()
    running = decoding(s, 0, 9, max_tokens=504)
    for _ in range(outputs - 1):
        s.cache.reserve(running, running.total_len)
        apply(s, Batch("decode", [ScheduledReq(running, running.total_len - 1, 1)]))
    req = waiting(s, 1, prompt, max_tokens=508 + 4 * short - prompt)
    assert s.cache.num_available == 253, "setup: the pages changed"
    return s, req


def _slack(fn, prompt: int, outputs: int) -> Optional[int]:
    """The most pages (0 to 6) request 1 may be short and still be admitted by `fn`."""
    for short in range(7):
        if not admits(fn, *_short(prompt, outputs, short)):
            return short - 1 if short else None
    return None


def counts_held_from_total_len(fn) -> bool:
    try:
        return _slack(fn, 6, 1) == 2 and _slack(fn, 13, 1) == 4 and _slack(fn, 6, 4) == 3
    except Exception:
        return False
