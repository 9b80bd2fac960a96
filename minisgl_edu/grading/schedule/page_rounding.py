"""Exercise 5's admission: a request's pages rounded up one too many, told apart from a strict fit.

A request's worst case is `pages_for(final, page_size)`, its whole run rounded up to whole pages.
`final // page_size + 1` looks like the same rounding and is right for every run whose last page is
partly empty, but a run that fills its last page exactly gets one page too many. The exact-fit cases
(`base.case_whole_pool`, `edges.case_shared_prefix_tight`, `edges.case_unlocked_prefix_tight`) use
such runs, so that answer is refused there like one that compares with `<` instead of `<=`. The
probe below runs the answer alone on the whole pool twice, with runs of the same page count that
end one token short of a page boundary and exactly on it: only the extra page tells them apart.
The exact-fit cases call `refuse_full_last_page`, which also asks round_half.py about the other
rounding that over-counts whole pages, round(final / page_size + 0.5).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.schedule.checks import admits, sched
from minisgl_edu.grading.schedule.round_half import refuse_odd_whole_pages

ONE_PAGE_TOO_MANY = (
    "round a request's pages up with pages_for(len(req.input_ids) + req.max_new_tokens, page_size), that is "
    "(final + page_size - 1) // page_size: final // page_size + 1 counts one page too many when the run "
    "fills its last page exactly"
)


def counts_a_full_last_page_twice(fn) -> bool:
    """Whether `fn`, with nothing else admitted, admits a run of 1023 tokens (256 pages of 4, the last
    one not full: the whole pool) but refuses one of 1024 tokens (256 pages too, the last one full).
    A strict comparison refuses both, a count rounded down or one token short admits both."""

    def alone(final: int) -> bool:
        s = sched()  # 256 pages of 4 tokens, all available
        return admits(fn, s, waiting(s, 0, 8, max_tokens=final - 8))

    return alone(1023) and not alone(1024)


def full_last_page_message(fn) -> str:
    """The sentence that names the mistake, for a case's message (empty when `fn` does not make it)."""
    if not counts_a_full_last_page_twice(fn):
        return ""
    return (
        " Alone, your function admits a run of 1023 tokens (256 pages of 4, the last one not full) but not one "
        "of 1024 tokens (also 256 pages, the last one full): it counts one page too many for a run that ends "
        "exactly on a page boundary"
    )


def refuse_full_last_page(fn, req, why: str) -> None:
    """In an exact-fit case: `req` was refused, and `fn` counts a full last page one too many (either way)."""
    full_page = full_last_page_message(fn) if req.table_idx < 0 else ""
    if full_page:
        raise Mistake(f"request {req.uid} was not admitted, but {why}.{full_page}", ONE_PAGE_TOO_MANY)
    refuse_odd_whole_pages(fn, req, why)
