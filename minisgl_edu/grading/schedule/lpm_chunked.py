"""Exercise 5's stretch: the requests not yet admitted are sorted also while a chunked prefill is
under way. The one check here (`sorted_behind_a_chunk`, part of the case "only new requests are
reordered") sets a request part-way through its prompt at the head of the queue and two new
requests behind it, in arrival order the one with nothing cached first: the batch must finish the
chunked prompt, then take the new requests by cached pages. An answer that sorts only when no
request is part-way through its prompt is named, after a control: the same two new requests, alone,
in the order it gives them.

A second check (`chunked_first_above_the_threshold`, part of the case "more than LPM_MAX_WAITING
waiting") has the longest-prefix order admit a request that is NOT the head of the queue, with a
prompt longer than the budget, so that it is part-way through its prompt behind the unadmitted
head; then more than LPM_MAX_WAITING requests wait. The chunked request still goes first: only the
requests not yet admitted fall back to arrival order. A batch that walks scheduler.waiting as it
stands (the head first) is named.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, ReqStatus, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, cached, token_ids
from minisgl_edu.grading.schedule.checks import (
    add_waiting,
    decide_in_order,
    hide_engine_answer,
    items_of,
    lpm_sched,
    show,
    show_expected,
)
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule_next_batch


def _behind_a_chunk(chunked: bool) -> Scheduler:
    """Request 1 (nothing cached) and request 2 (6 cached pages) wait, with budget 16; with `chunked`,
    request 0 (40 tokens, nothing cached) arrived first and has had two 16-token chunks."""
    s = lpm_sched(budget=16)
    shared = cached(s, token_ids(24, 140))
    if chunked:
        add_waiting(s, 0, token_ids(40, 23), pages=0)
        for _ in range(2):
            apply(s, package_schedule_next_batch(s))  # only request 0 waits: any order
    add_waiting(s, 1, token_ids(4, 24), pages=0)
    add_waiting(s, 2, shared + token_ids(4, 25), pages=6)
    return s


def sorted_behind_a_chunk(fn) -> None:
    """A request part-way through its prompt at the head of the queue does not turn the order off:
    the requests not yet admitted behind it are still sorted."""
    s = _behind_a_chunk(chunked=True)
    batch = decide_in_order(fn, s)
    want = ("prefill", [(0, 32, 8), (2, 24, 4), (1, 0, 4)])
    if items_of(batch) == want:
        return
    what = (
        "request 0 is part-way through its 40-token prompt (32 tokens done, it holds a page-table row); behind "
        "it wait request 1 (nothing cached) and request 2 (6 cached prefix pages), in that order. Request 0's "
        "last 8 tokens go first, then the new requests by cached pages: 2, then 1. Expected "
        f"{show_expected(want)}, got {show(batch)}"
    )
    alone = _behind_a_chunk(chunked=False)
    if items_of(batch) == ("prefill", [(0, 32, 8), (1, 0, 4), (2, 24, 4)]) and items_of(decide_in_order(fn, alone)) == (
        "prefill",
        [(2, 24, 4), (1, 0, 4)],
    ):
        raise Mistake(
            f"{what}. Without request 0 yours does put request 2 first: a request part-way through its "
            "prompt turned the longest-prefix order off",
            "a request part-way through its prompt goes first, and the requests not yet admitted behind it are "
            "still sorted by cached pages, most first: sort them whether or not a chunked prefill is under way",
        )
    raise AssertionError(what)


def _chunked_behind_the_head(count: int) -> Scheduler:
    """Request 0 (20 tokens, nothing cached) arrived first; request 1 (44 tokens, 6 cached pages)
    was admitted ahead of it by its cached prefix and has had one 16-token chunk (40 of 44 done);
    then requests 2.. arrive (5 tokens, nothing cached), until `count` wait. Budget 16. With 3
    waiting, request 2 is 34 tokens instead, 8 pages of them cached: more than request 1's 6."""
    s = lpm_sched(budget=16)
    shared = cached(s, token_ids(24, 150))
    add_waiting(s, 0, token_ids(20, 26), pages=0)
    req = add_waiting(s, 1, shared + token_ids(20, 27), pages=6)
    s.cache.admit(req)  # the longest-prefix order's first step: request 1 first, chunked by the budget
    s.cache.reserve(req, req.cached_len + 16)
    req.status = ReqStatus.PREFILLING
    apply(s, Batch("prefill", [ScheduledReq(req, req.cached_len, 16)]))
    if count == 3:
        add_waiting(s, 2, cached(s, token_ids(32, 160)) + token_ids(2, 28), pages=8)
    for uid in range(2, count if count > 3 else 2):
        add_waiting(s, uid, token_ids(5, 26 + uid), pages=0)
    return s


WANT = ("prefill", [(1, 40, 4), (0, 0, 12)])
HEAD_FIRST = ("prefill", [(0, 0, 16)])  # scheduler.waiting walked as it stands
BELOW = ("prefill", [(1, 40, 4), (2, 32, 2), (0, 0, 10)])  # 3 waiting: request 1, then by cached pages
SORTED_WITH_THE_NEW = ("prefill", [(2, 32, 2), (1, 40, 4), (0, 0, 10)])  # request 1 sorted by its 6 pages


def _what(max_waiting: int, got: str) -> str:
    return (
        f"request 1 was admitted ahead of request 0 by its cached prefix and is part-way through its 44-token "
        f"prompt (40 tokens done, it holds a page-table row); request 0 (20 tokens, not admitted) is the head "
        f"of scheduler.waiting, and {max_waiting + 1} requests wait, more than LPM_MAX_WAITING = {max_waiting}. "
        f"Request 1's last 4 tokens go first, then the requests not yet admitted in arrival order: expected "
        f"{show_expected(WANT)}, got {got}"
    )


def _plain(fn, count: int):
    """The answer's batch on the scene with `count` waiting, without the checks of `decide`."""
    probe = _chunked_behind_the_head(count)
    hide_engine_answer(probe)
    try:
        return items_of(fn(probe))
    except Exception:
        return None


def chunked_first_above_the_threshold(fn, max_waiting: int) -> None:
    """Above the threshold a chunked request that is not the head of the queue still goes first. A
    plain call first (no checks): a batch that starts with the head, leaving request 1 out, is named
    here, before the check of the rows calls it only 'a chunked request not in the batch'. A control
    with 3 requests waiting (below the threshold, request 2 with more cached pages than request 1)
    tells which: only the fallback forgets it, or request 1 is sorted with the new requests (the
    answer takes the head of the queue for the chunked request)."""
    first = _plain(fn, max_waiting + 1)
    if first == HEAD_FIRST:
        below = _plain(fn, 3)
        what = _what(max_waiting, show_expected(first))
        if below == BELOW:
            raise Mistake(
                f"{what}. With 3 requests waiting yours does put request 1 first: above the threshold the "
                "chunked request lost its place",
                "the chunked request goes first in every step, above the threshold too: above LPM_MAX_WAITING "
                "only the requests not yet admitted keep arrival order; the ones part-way through their prompt "
                "(table_idx >= 0) still go before them",
            )
        if below == SORTED_WITH_THE_NEW:
            raise Mistake(
                f"{what}. With 3 requests waiting (request 2 with 8 cached pages) yours sorts request 1 among "
                f"the new requests, behind request 2: {show_expected(below)}",
                "the request part-way through its prompt need not be the head of scheduler.waiting: with longest "
                "prefix match a later arrival can be admitted first. Take every waiting request with "
                "table_idx >= 0, wherever it stands, before the requests not yet admitted",
            )
        raise Mistake(
            what,
            "a request part-way through its prompt (table_idx >= 0) goes first in every step, wherever it stands "
            "in scheduler.waiting (the longest-prefix order can admit one behind the head): before the requests "
            "not yet admitted",
        )
    batch = decide_in_order(fn, _chunked_behind_the_head(max_waiting + 1))
    if items_of(batch) != WANT:
        raise AssertionError(_what(max_waiting, show(batch)))
