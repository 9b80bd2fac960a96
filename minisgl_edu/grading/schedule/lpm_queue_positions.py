"""Exercise 5's stretch: positions in the list of new requests used on scheduler.waiting.

An answer may sort positions rather than requests (`order = sorted(range(len(new)), key=...)`) and
then take `scheduler.waiting[i]` instead of `new[i]`. The positions count in the list of requests
not yet admitted; scheduler.waiting also holds the requests part-way through their prompt, ahead of
them, so each position names a request one place too early in the queue: the chunked request comes
up a second time and the last new request is never considered. In a case the symptom is only
"request 0 is twice in the batch", which `checks.check_batch` reports for any duplicate.

`check_queue_positions(fn, uid)` is asked when a batch holds a request twice. A probe of its own
confirms the mistake: request 0 has the last 4 tokens of its prompt to go at the head of the queue,
and requests 1, 2, 3 (nothing, 1 and 2 cached pages, 4 tokens to compute each) wait behind it, budget
16. The answer takes request 0's chunk, then the queue's entries at the positions of 3, 2, 1 in the
list of new requests: 2, 1 and request 0 again. The control, the same three requests alone, shows
that its order itself is right (3, 2, 1). This module imports nothing from checks.py, which calls it.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, cached, token_ids
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule_next_batch

QUEUE_POSITIONS_HINT = (
    "a position counted in your list of new requests (table_idx < 0) indexes that list, not scheduler.waiting: "
    "the queue also holds the requests part-way through their prompt, ahead of the new ones, so "
    "scheduler.waiting[i] is another request. Take new[i], or sort the requests themselves (sorted(new, key=...))"
)

ALONE = [(3, 8, 4), (2, 4, 4), (1, 0, 4)]  # the longest-prefix order, nobody part-way through
SHIFTED = [(0, 16, 4), (2, 4, 4), (1, 0, 4), (0, 16, 4)]  # queue positions 2, 1, 0 after the chunk


def _scene(chunked: bool) -> Scheduler:
    """Budget 16; requests 1, 2, 3 wait with 0, 1 and 2 cached pages and 4 tokens to compute each.
    With `chunked`, request 0 (20 tokens, nothing cached) arrived first and has had a 16-token chunk."""
    s = new_scheduler(max_prefill_tokens=16, cache="radix")
    if chunked:
        s.add_request(0, token_ids(20, 171), SamplingParams(max_tokens=8, ignore_eos=True))
        apply(s, package_schedule_next_batch(s))  # only request 0 waits: any order
    for uid in (1, 2, 3):
        prefix = cached(s, token_ids(4 * (uid - 1), 171 + uid)) if uid > 1 else []
        s.add_request(uid, prefix + token_ids(4, 175 + uid), SamplingParams(max_tokens=8, ignore_eos=True))
    return s


def _plain(fn, chunked: bool):
    """The answer's prefill items on the probe's scene, without the checks of `decide`."""
    try:
        batch = fn(_scene(chunked))
        return [(it.req.uid, it.start, it.num_tokens) for it in batch.items]
    except Exception:
        return None


def check_queue_positions(fn, uid: int) -> None:
    """Raise the mistake when `fn` (None: no probe) takes the queue's entries at the positions its
    order gives in the list of new requests; `uid`: the request the case's batch holds twice."""
    if fn is None or _plain(fn, chunked=True) != SHIFTED or _plain(fn, chunked=False) != ALONE:
        return
    raise Mistake(
        f"request {uid} is twice in the batch. A probe shows why: request 0 has the last 4 tokens of its prompt "
        "to go at the head of scheduler.waiting, and requests 1, 2, 3 (0, 1 and 2 cached pages) wait behind it, "
        "budget 16. Yours gives request 0's chunk, then requests 2, 1 and request 0 again: the entries of "
        "scheduler.waiting at 2, 1, 0, the positions of requests 3, 2, 1 in the list of new requests, one place "
        "early because request 0 stands ahead of them. Without request 0 yours gives 3, 2, 1, the right order",
        QUEUE_POSITIONS_HINT,
    )
