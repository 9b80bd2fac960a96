"""Exercise 5's probe for an admission count that never refuses for pages, called by
base.case_does_not_fit when a request whose run does not fit was admitted.

try_admit sums each admitted request's remaining need, pages_for(len(r.input_ids) + r.max_new_tokens)
- cache.held_pages(r), clamped at zero so that a request holding more than it may still take adds
nothing. Clamped with `min(need, 0)` instead of `max(need, 0)`, every term is 0 or less: the sum never
exceeds cache.num_available, and every request is admitted while a page-table row is free.

Many slips admit the request of case_does_not_fit (forgetting the running request's need, or the
generated tokens), so the probe asks a scene of its own where any count of the request's own pages
refuses: a lone request, nothing running, 4 pages available, a 24-token prompt (6 pages, more than
the 4 on its own) and 200 tokens to generate (56 pages in all), with a budget of 8 tokens so that its
first chunk fits in the 4 pages. Only an answer whose count of pages never says no admits it.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import ballast, waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.grading.schedule.checks import admits

NEED_CLAMPED = (
    "clamp each request's remaining need at zero from below, max(need, 0): pages_for(len(r.input_ids) + "
    "r.max_new_tokens, page_size) - cache.held_pages(r) never counts less than nothing. min(need, 0) keeps only "
    "the negative part, so every term is 0 or less, the sum never exceeds cache.num_available, and every request "
    "is admitted while a page-table row is free"
)


def never_refuses_for_pages(fn) -> bool:
    """Whether `fn` admits a lone request whose prompt alone (6 pages) exceeds the 4 pages available."""
    s = new_scheduler(max_prefill_tokens=8, cache="radix")
    ballast(s, s.cache.num_available - 4)  # 4 pages left for the request: room for its first chunk only
    req = waiting(s, 9_000_003, 6 * s.cache.page_size, max_tokens=200)
    return admits(fn, s, req)


def probe_message() -> str:
    """What the probe showed, for the failure message of an answer that `never_refuses_for_pages`."""
    return (
        ". A probe shows your count of pages never says no: a lone request, nothing running, a 24-token prompt "
        "(6 pages) and 200 tokens to generate (56 pages in all) with only 4 pages available, was admitted too. "
        "Your sum of the needs stays at 0 or below"
    )
