"""Exercise 5's decision: scheduler.running grown through an alias, told apart from a request moved early.

`admitted = scheduler.running` names the scheduler's own list, not a copy: `admitted += [...]` (or
`.extend`, `.append`) then adds the waiting requests that hold a row to scheduler.running itself. In
a case the symptom is the one `checks.check_none_moved` reports for an answer that moves a request
to running when its last chunk is scheduled. The probe below tells them apart: three short requests
wait, all fit in one batch, and an answer that grows running through an alias leaves request 0 in it
twice (added once when request 1 is admitted, again when request 2 is), and still in waiting. No
answer moves a request to running twice on purpose.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.harness import new_scheduler

RUNNING_ALIASED = (
    "`admitted = scheduler.running` is the scheduler's own list, not a copy: `admitted += [...]` (or .extend, "
    ".append) adds the waiting requests to scheduler.running itself. Build a new list: "
    "admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]"
)


def grows_running_through_an_alias(fn) -> bool:
    """Whether `fn`, on three short waiting requests and nothing running, leaves request 0 in
    scheduler.running more than once (and still in scheduler.waiting)."""
    s = new_scheduler(max_prefill_tokens=64, cache="naive")
    first = waiting(s, 0, 4)
    waiting(s, 1, 4)
    waiting(s, 2, 4)
    try:
        fn(s)
    except Exception:
        return False
    return sum(r is first for r in s.running) > 1 and any(r is first for r in s.waiting)


def aliased_message(fn) -> str:
    """The sentence that names the mistake, for a case's message (empty when `fn` does not make it)."""
    if not grows_running_through_an_alias(fn):
        return ""
    return (
        ". With requests 0, 1 and 2 waiting and nothing running, your function leaves request 0 in "
        "scheduler.running twice and in scheduler.waiting too: each admission adds the waiting requests with a "
        "row to scheduler.running, as `+=` on a name for scheduler.running does"
    )
