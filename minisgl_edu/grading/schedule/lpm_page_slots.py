"""Exercise 5's stretch: the sort key is the length of the matched page list, not that length divided
by the page size. Called by lpm.case_longest_first when its order is wrong.

`scheduler.cache.match(req)` returns the matched length and a list with one page id per cached page.
An answer that reads that list as token slots and turns it into pages, `len(pages) // page_size`,
sorts by a quarter of the cached pages (pages of 4 tokens), rounded down: 1 to 3 cached pages count 0
and tie with a request that has nothing cached, 4 to 7 count 1 and tie among themselves.

`divides_by_page_size(fn)` asks for that fingerprint on two requests of its own, request 0 arriving
first with fewer cached pages than request 1: with 0 and 3 pages, and with 4 and 7, such an answer
keeps arrival order (a tie), while with 0 and 4 it puts request 1 first. The right order puts
request 1 first all three times, and an answer that sorts any hit before no hit does so with 0 and 3.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, lpm_sched, pages_of, show
from minisgl_edu.scheduler import Scheduler

PAGE_SLOTS = (
    "the key is len(pages) itself: the list scheduler.cache.match(req) returns holds one page id per cached page, "
    "not one per token slot, so do not divide its length by the page size (that makes 1 to 3 cached pages count "
    "as none)"
)


def _order(fn, fewer: int, more: int) -> Optional[list[int]]:
    """The uids of `fn`'s prefill batch: request 0 (first) with `fewer` cached pages, request 1 with `more`."""
    s = lpm_sched()
    page = s.cache.page_size
    shared = cached(s, token_ids(8 * page, 160))
    add_waiting(s, 0, shared[: fewer * page] + token_ids(3, 161), pages=fewer)
    add_waiting(s, 1, shared[: more * page] + token_ids(3, 162), pages=more)
    hide_engine_answer(s)
    try:
        batch = fn(s)
    except Exception:
        return None
    return [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else None


def divides_by_page_size(fn) -> bool:
    """Whether `fn` orders as a key of len(pages) // page_size would: ties at 0 and 3 pages, and at 4
    and 7, but request 1 first at 0 and 4."""
    return _order(fn, 0, 3) == [0, 1] and _order(fn, 4, 7) == [0, 1] and _order(fn, 0, 4) == [1, 0]


def check_pages_divided(fn, batch, want: list[int], s: Scheduler, arrival: list[int]) -> None:
    """Raise the mistake when `batch` (decided on `s`, where requests arrived in the order `arrival`) is not
    in the order `want` and the probe confirms the divided key."""
    got = [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else None
    if got == want or not divides_by_page_size(fn):
        return
    raise Mistake(
        f"with these cached prefix pages, in arrival order: {pages_of(s, arrival)}, the prefill batch should "
        f"hold requests {want} in that order, yours is {show(batch)}. A probe of two "
        "requests shows why: with 0 and 3 cached pages, and with 4 and 7, yours keeps arrival order as if they "
        "tied, with 0 and 4 it puts the 4-page one first. That is a key of len(pages) // page_size (pages of "
        f"{lpm_sched().cache.page_size} tokens): the cached pages divided by the page size",
        PAGE_SLOTS,
    )
