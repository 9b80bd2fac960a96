"""Exercise 2's probe for a head of `scheduler.waiting` that is never removed, called by `checks.check_gone`.

An answer that finds the request's position in the deque and removes it with `if pos:`, meaning
"if it was found", reads position 0 as not found: a request behind the head is taken out, the head
itself (a request alone in the queue, or the one whose chunked prefill is under way) stays. A
request left in `scheduler.waiting` is also what many other mistakes leave (the head popped instead,
the queue chosen by status or row), so the probe checks the cause itself: on a scheduler of its
own, three requests wait, none admitted; it aborts the middle one (position 1), then the head
(position 0, with one still behind it), and names this mistake only when the first left the queue
and the second stayed at its head.
"""

from __future__ import annotations

from minisgl_edu.grading.abort.probes import probe_uid, scheduler_with
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting

HEAD_SKIPPED = (
    "position 0 is a real position in scheduler.waiting (the head: a request alone in the queue, or the one "
    "whose chunked prefill is under way), and 0 is falsy: a test such as `if pos:` or `if index:` takes it for "
    "'not found'. Test `pos is not None` (or `req in scheduler.waiting`), or remove the request itself with "
    "scheduler.waiting.remove(req)"
)


def skips_the_head(fn) -> bool:
    """`fn` removes a waiting request at position 1 and leaves one at position 0 (the head) queued."""
    s = scheduler_with(fn)
    head, middle, last = (waiting(s, probe_uid(), 5).uid for _ in range(3))
    try:
        s.abort(middle)
        behind_removed = [r.uid for r in s.waiting] == [head, last]
        s.abort(head)
    except Exception:
        return False  # some other mistake: the hint of the failed check names it
    return behind_removed and [r.uid for r in s.waiting] == [head, last]


def head_skipped(uid: int) -> Mistake:
    return Mistake(
        f"the request (uid {uid}) is still in the waiting queue (scheduler.waiting). Your abort, given three "
        "waiting requests on a scheduler of its own, took the middle one (position 1) out of scheduler.waiting "
        "but left the head (position 0) there: it reads position 0 as 'not in the queue'",
        HEAD_SKIPPED,
    )
