"""Exercise 5: an admission that stands, read by the caller as a refusal.

The skeleton's `try_admit` returns True when the request is admitted and False when it is not,
and the caller writes `if req.table_idx < 0 and not try_admit(scheduler, req): break`. A try_admit
whose success path ends without `return True` falls off the end and returns None, which
`not try_admit(...)` reads as a refusal: the request keeps the row and pages cache.admit gave it,
but the batch stops before it. In a case that shows as "holds a page-table row but is not in the
batch", the symptom of a refusal left un-undone (mistake 13), whose hint sends the student to an
undo that is already right.

`check_admission_kept_quiet` tells them apart on a probe of its own: a lone 8-token request in an
empty engine, which fits with 254 pages to spare, so no correct count refuses it. An answer that
admits it (a row) and still leaves it out of the batch took its own admission for a refusal. When
the answer's module has a `try_admit` of the skeleton's signature, it is asked the same question
directly, and what it returned is quoted. The probes run only after the decision's own checks
have failed (checks.decide), since every scheduler made for a probe resets the page table that
the grader's schedulers share.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.scheduler import Scheduler

RETURNED_NONE = (
    "return True at the end of try_admit, when the admission stands: a function that ends without `return` "
    "returns None, and the caller's `not try_admit(scheduler, req)` reads None as a refusal, so the request "
    "keeps the row and pages cache.admit gave it but gets no item (a refusal returns False, after the undo)"
)
READ_AS_REFUSAL = (
    "when a request is admitted (cache.admit gave it a row and the fit check passed), give it its chunk: your "
    "code treats a successful admission like a refusal and stops the batch before it. If a helper decides the "
    "admission, make it return True on success (a function that ends without `return` returns None)"
)


def _lone_request() -> tuple[Scheduler, Any]:
    """An empty engine (256 pages, budget 64) and one waiting 8-token request: it fits."""
    s = new_scheduler(max_prefill_tokens=64, cache="naive")
    return s, waiting(s, 0, 8)


def _left_out_when_admitted(fn) -> bool:
    """Whether `fn`, on the lone request, admits it (a row) and puts no item of it in its batch."""
    s, req = _lone_request()
    try:
        batch = fn(s)
    except Exception:
        return False
    in_batch = isinstance(batch, Batch) and any(it.req is req for it in batch.items)
    return req.table_idx >= 0 and not in_batch


def _try_admit_returns(fn) -> Optional[tuple[Any, bool]]:
    """(what the answer's own try_admit returned, whether the request then holds a row) for the lone
    request, or None when the answer's module has no try_admit or calling it raises."""
    helper = getattr(fn, "__globals__", {}).get("try_admit")
    if not callable(helper):
        return None
    s, req = _lone_request()
    try:
        returned = helper(s, req)
    except Exception:
        return None
    return returned, req.table_idx >= 0


def check_admission_kept_quiet(s: Scheduler, batch: Optional[Batch], fn) -> None:
    """A request admitted in this decision (a row, nothing computed yet) is not in the batch: raise
    the mistake of a successful admission read as a refusal, when the probe shows it. Called only
    once checks.check_rows has failed on `s`: a probe's scheduler resets the engine's shared page
    table, so `s` is read first and not checked again after it."""
    if fn is None:
        return
    in_batch = {it.req.uid for it in batch.items} if isinstance(batch, Batch) else set()
    left = [r for r in s.waiting if r.table_idx >= 0 and r.uid not in in_batch and r.cached_len == r.prefix_len]
    if not left or not _left_out_when_admitted(fn):
        return
    seen = (
        f"request {left[0].uid} holds a page-table row but is not in the batch. A probe shows why: alone in an "
        "empty engine, an 8-token request (2 pages of the 256 available, a budget of 64) is admitted, it holds a "
        "row, and yet your function gives it no item: the admission succeeded and was then taken for a refusal"
    )
    asked = _try_admit_returns(fn)
    if asked is not None and asked[1] and asked[0] is not True and not asked[0]:
        raise Mistake(
            f"{seen}. Your try_admit returned {asked[0]!r} for it (not True) while the request kept its row",
            RETURNED_NONE,
        ) from None
    raise Mistake(seen, READ_AS_REFUSAL) from None
