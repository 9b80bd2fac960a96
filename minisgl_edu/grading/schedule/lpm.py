"""Exercise 5, stretch — longest prefix match first, which this engine does not have:
`schedule_next_batch_lpm(scheduler) -> Batch | None`.

The base part admits waiting requests first come, first served. SGLang's `lpm` policy
(`--schedule-policy lpm`, `SchedulePolicy` in `python/sglang/srt/managers/schedule_policy.py`)
looks at the prefix cache first: every waiting request is matched against it and the queue is
sorted by the length of the match, longest first (a stable sort, so equal matches keep their
order), then admitted as before. A request whose prefix is cached goes before its pages are
evicted, and it needs fewer new pages. With more than 128 requests waiting SGLang falls back to
first come, first served, because matching every waiting request each step costs too much.

Here the same rules as the base part hold, except the order in which the requests not yet admitted
are considered: by the number of prefix pages `cache.admit` would give them
(`scheduler.cache.match(req)`), most first, ties in arrival order, and arrival order when more than
`LPM_MAX_WAITING` requests wait. A request part-way through a chunked prefill still goes first,
and the decode batch and `scheduler.waiting` itself keep their order. The grader's reference is
`reference_lpm` below (the package has none to copy). The unit cases build the scheduler's state
by hand, as the base grader does; the engine case runs chat requests on the default model where
the order changes which request is admitted first.

Graded on its own score line ("schedule_lpm"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, SamplingParams, ScheduledReq
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.fixtures import apply, ballast, cached, prefilled, token_ids
from minisgl_edu.grading.harness import fail_fast_if_stub, new_scheduler, remember, require_passing
from minisgl_edu.grading.schedule.checks import (
    add_waiting,
    decide_in_order,
    expect_order,
    items_of,
    lpm_sched,
    pages_of,
    prefix_pages,
    show,
    show_expected,
)
from minisgl_edu.grading.schedule.edges import case_memory_margins
from minisgl_edu.grading.schedule.engine import run_steps
from minisgl_edu.grading.schedule.lpm_chunked import chunked_first_above_the_threshold, sorted_behind_a_chunk
from minisgl_edu.grading.schedule.lpm_edges import DEEPEST_EDGE, counts_the_deepest_edge
from minisgl_edu.grading.schedule.lpm_fcfs_matches import check_fcfs_leaves_the_cache
from minisgl_edu.grading.schedule.lpm_fraction import fraction_play
from minisgl_edu.grading.schedule.lpm_head import check_head_sorted
from minisgl_edu.grading.schedule.lpm_left_out import check_left_out
from minisgl_edu.grading.schedule.lpm_listed import check_listed_in_queue_order
from minisgl_edu.grading.schedule.lpm_match_first import REMATCHED, check_matched_before_the_chunk
from minisgl_edu.grading.schedule.lpm_new_join import check_new_join
from minisgl_edu.grading.schedule.lpm_page_ids import PAGE_IDS, sorts_by_page_ids
from minisgl_edu.grading.schedule.lpm_page_slots import check_pages_divided
from minisgl_edu.grading.schedule.lpm_reversed import check_threshold_reversed
from minisgl_edu.grading.schedule.lpm_ties import case_ties, tie_breaker
from minisgl_edu.grading.schedule.lpm_unmoved import check_reordered
from minisgl_edu.grading.schedule.scenes import schedule_case
from minisgl_edu.kvcache import OutOfPages, pages_for
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule_next_batch

LPM_MAX_WAITING = 8  # the notebook states the same number; SGLang's is 128


# ---------------------------------------------------------------------------- the reference
def _lpm_order(scheduler) -> list[Req]:
    """The order the waiting requests are considered in: the ones already admitted (part-way
    through their prompt) first, then the rest by cached prefix, most first (a stable sort)."""
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: -prefix_pages(scheduler, r))
    return started + new


def reference_lpm(scheduler) -> Optional[Batch]:
    """The base part's decision with the waiting requests considered in `_lpm_order`."""
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in _lpm_order(scheduler):
        if budget <= 0:
            break
        if req.table_idx < 0 and not scheduler.try_admit(req):  # the base part's admission
            break  # nobody overtakes the first request (in this order) that does not fit
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    return scheduler._schedule_decode()  # nothing to prefill: the base part's decode batch


# ---------------------------------------------------------------------------- unit cases
def case_longest_first(fn):
    s = lpm_sched()
    shared = cached(s, token_ids(24, 50))  # 6 pages of an earlier request's prompt
    add_waiting(s, 0, token_ids(30, 1), pages=0)  # the longest prompt, nothing cached
    add_waiting(s, 1, shared[:8] + token_ids(10, 2), pages=2)
    add_waiting(s, 2, shared + token_ids(3, 3), pages=6)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    check_threshold_reversed(fn, batch, [2, 1, 0], order, LPM_MAX_WAITING)
    check_head_sorted(fn, batch, [2, 1, 0], order)
    check_left_out(batch, [2, 1, 0], s)
    check_listed_in_queue_order(fn, batch, [2, 1, 0], order)
    check_pages_divided(fn, batch, [2, 1, 0], s, order)  # len(pages) // page_size: 2 pages count 0
    what = (
        "requests 0, 1, 2 arrive in that order with 0, 2 and 6 cached prefix pages: the longest cached "
        "prefix goes first (not the longest prompt, not the shortest prefix)"
    )
    check_reordered(fn, batch, [2, 1, 0], order, s, what)  # a sort that moved nothing (a bool comparator)
    expect_order(batch, [2, 1, 0], s, what, order)
    assert items_of(batch) == ("prefill", [(2, 24, 3), (1, 8, 10), (0, 0, 30)]), (
        f"each request's chunk starts after its cached prefix (req.cached_len once admitted): {show(batch)}"
    )
    s = lpm_sched()
    shared = cached(s, token_ids(32, 55))  # 8 pages
    add_waiting(s, 0, shared + token_ids(8, 6), pages=8)  # 10 pages, 2 still to compute
    add_waiting(s, 1, token_ids(4, 7), pages=0)  # 1 page to compute
    batch = decide_in_order(fn, s)
    if items_of(batch) == ("prefill", [(1, 0, 4), (0, 32, 8)]):
        raise Mistake(
            f"request 0 (40 tokens, 32 of them cached: 8 pages cached, 2 still to compute) arrived before "
            f"request 1 (4 tokens, nothing cached: 1 page to compute), and yours put request 1 first: {show(batch)}",
            "order by the cached pages, len(scheduler.cache.match(req)[1]), most first, not by the pages still "
            "to compute: a short prompt with nothing cached does not go before a long one with a long cached prefix",
        )
    expect_order(batch, [0, 1], s, "request 0 has 8 cached prefix pages, request 1 none", [0, 1])
    fraction_play(fn)  # a long prompt with more cached pages before a short one mostly cached


def case_whole_pages(fn):
    s = lpm_sched()
    shared = cached(s, token_ids(16, 70))  # 4 pages
    add_waiting(s, 0, shared[:9] + token_ids(5, 71), pages=2)  # 9 tokens in common: 2 whole pages
    add_waiting(s, 1, shared[:11] + token_ids(5, 72), pages=2)  # 11 tokens in common: still 2 whole pages
    add_waiting(s, 2, shared[:7] + token_ids(5, 73), pages=1)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    # 0 and 1 tie in whole pages: 1 first is a count of tokens in common or a second sort key; ask which
    mistake = tie_breaker(fn) if _order(batch)[:2] == [1, 0] else None
    if mistake is not None:
        raise mistake
    expect_order(
        batch,
        [0, 1, 2],
        s,
        "requests 0 and 1 share 9 and 11 tokens with the cached prompt, but the cache matches whole pages "
        "of 4 tokens: 2 pages each, a tie, so they keep arrival order (count the pages scheduler.cache.match "
        "returns, not tokens in common)",
        order,
    )
    s = lpm_sched()
    shared = cached(s, token_ids(16, 80))
    add_waiting(s, 0, list(shared), pages=3)  # the whole prompt is cached; admit leaves its last page to compute
    add_waiting(s, 1, shared + token_ids(3, 81), pages=4)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    what = (
        "request 0's whole 16-token prompt is cached, but cache.admit leaves its last token to compute (its "
        "logits give the first output token), so it gets 3 pages; request 1 gets all 4"
    )
    check_listed_in_queue_order(fn, batch, [1, 0], order)
    if _order(batch) != [1, 0] and counts_the_deepest_edge(fn):
        raise Mistake(
            f"{what}: the prefill batch should hold requests [1, 0] in that order, yours is {show(batch)}. Its "
            "match split the cached prompt's edge in two (12 and 4 tokens). On a scene with a 4-page prefix "
            "cached over two nodes of 2 pages and a 3-page one on one node, yours also puts the 3-page request "
            f"first: {DEEPEST_EDGE[0]}",
            DEEPEST_EDGE[1],
        )
    expect_order(
        batch,
        [1, 0],
        s,
        f"{what}. Count what scheduler.cache.match(req) returns, not match_prefix(req.input_ids)",
        order,
    )


def _order(batch) -> list[int]:
    return [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else []


def case_no_prefix_fcfs(fn):
    s = lpm_sched()
    shared = cached(s, token_ids(8, 90))
    add_waiting(s, 0, token_ids(6, 10), pages=0)
    add_waiting(s, 1, token_ids(9, 11), pages=0)
    add_waiting(s, 2, shared[:4] + token_ids(5, 12), pages=1)
    add_waiting(s, 3, token_ids(5, 13), pages=0)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    expect_order(
        batch,
        [2, 0, 1, 3],
        s,
        "only request 2 finds a cached prefix: it goes first, and the others, with none, keep their arrival "
        "order among themselves",
        order,
    )


def _queue(n: int) -> tuple[Scheduler, list[int]]:
    """n waiting requests; only the last to arrive has a cached prefix."""
    s = lpm_sched()
    shared = cached(s, token_ids(8, 100))
    for uid in range(n - 1):
        add_waiting(s, uid, token_ids(5, 20 + uid), pages=0)
    add_waiting(s, n - 1, shared + token_ids(3, 40), pages=2)
    return s, [r.uid for r in s.waiting]


def case_threshold(fn):
    n = LPM_MAX_WAITING
    s, order = _queue(n)
    batch = decide_in_order(fn, s)
    expect_order(
        batch,
        [n - 1, 0, 1, 2],
        s,
        f"exactly LPM_MAX_WAITING = {n} requests wait, so the cached-prefix order still holds (it falls back "
        f"to first come, first served only when MORE than {n} wait): request {n - 1} first, then the first "
        "three of the rest (4 requests may be admitted at once)",
        order,
    )
    s, order = _queue(n + 1)
    batch = decide_in_order(fn, s)
    expect_order(
        batch,
        [0, 1, 2, 3],
        s,
        f"{n + 1} requests wait, more than LPM_MAX_WAITING = {n}: first come, first served, as in the base "
        "part (SGLang stops sorting above 128, because matching every waiting request each step costs too much)",
        order,
    )
    # n + 1 in scheduler.waiting, one of them part-way through its chunked prefill.
    s = lpm_sched(budget=24)
    shared = cached(s, token_ids(8, 100))
    add_waiting(s, 0, token_ids(40, 19), pages=0)
    apply(s, reference_lpm(s))  # request 0: 24 of its 40 prompt tokens done, it holds a row
    for uid in range(1, n):
        add_waiting(s, uid, token_ids(5, 20 + uid), pages=0)
    add_waiting(s, n, shared + token_ids(3, 40), pages=2)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    check_new_join(fn, s, batch, started=[0])
    expect_order(
        batch,
        [0, 1, 2],
        s,
        f"{n + 1} requests are in scheduler.waiting, request 0 (part-way through its chunked prefill) among them: "
        f"more than LPM_MAX_WAITING = {n}, so first come, first served. The threshold counts every request in "
        "scheduler.waiting, the one part-way through its prompt too, not only those not yet admitted",
        order,
    )
    chunked_first_above_the_threshold(fn, n)
    check_fcfs_leaves_the_cache(fn, n)  # no request matched that admission never reached


def case_only_new_requests(fn):
    s = lpm_sched(budget=16)
    shared = cached(s, token_ids(24, 110))
    add_waiting(s, 0, token_ids(40, 14), pages=0)
    steps = [
        ("prefill", [(0, 0, 16)]),
        ("prefill", [(0, 16, 16)]),
        ("prefill", [(0, 32, 8), (1, 24, 4)]),
    ]
    for n, expected in enumerate(steps, 1):
        if n == 2:
            add_waiting(s, 1, shared + token_ids(4, 15), pages=6)
        batch = decide_in_order(fn, s)
        check_new_join(fn, s, batch, started=[0])
        assert items_of(batch) == expected, (
            f"step {n}: request 0 is part-way through its 40-token prompt ({s.reqs[0].cached_len} tokens done "
            "before this step; it holds a page-table row) and request 1 waits with 6 cached prefix pages: a "
            "request part-way through a chunked prefill keeps going first, only requests not yet admitted are "
            f"reordered. Expected {show_expected(expected)}, got {show(batch)}"
        )
        apply(s, batch)
    sorted_behind_a_chunk(fn)
    s = lpm_sched()
    shared = cached(s, token_ids(24, 120))
    prefilled(s, add_waiting(s, 0, token_ids(10, 16), pages=0))
    prefilled(s, add_waiting(s, 1, shared + token_ids(4, 17), pages=6))
    batch = decide_in_order(fn, s)
    want = ("decode", [(0, 10, 1), (1, 28, 1)])
    assert items_of(batch) == want, (
        f"nobody waits: decode every running request in scheduler.running order, whatever their cached prefix "
        f"(the order is for admitting waiting requests only). Expected {show_expected(want)}, got {show(batch)}"
    )


def case_room_for_the_cached(fn):
    s = lpm_sched()
    shared = cached(s, token_ids(40, 130))  # 10 pages, a system prompt that a running request uses
    prefilled(s, add_waiting(s, 0, shared + token_ids(4, 18), max_tokens=920, pages=10))
    plain = add_waiting(s, 1, token_ids(44, 19), max_tokens=36, pages=0)  # may take 20 pages
    sharing = add_waiting(s, 2, shared + token_ids(4, 20), max_tokens=36, pages=10)  # 20 pages, 10 already there
    available = s.cache.num_available
    others = pages_for(44 + 920, 4) - s.cache.held_pages(s.reqs[0])
    assert (available - others, s.cache.prefix_cache.num_evictable) == (15, 0), "setup: 15 pages to spare"
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    assert sharing.table_idx >= 0 and plain.table_idx < 0, (
        "15 pages are left beside the running request. Request 1 (arrived first, nothing cached) may need 20: "
        "it does not fit. Request 2 shares the running request's 10 cached prompt pages, so it needs only 10 "
        "new ones: considered first (longest cached prefix), it is admitted; request 1 then still does not fit "
        f"and waits. Yours: {show(batch)}; admitted: "
        f"{[u for u in (1, 2) if s.reqs[u].table_idx >= 0]} ({pages_of(s, order)} cached pages)"
    )
    assert items_of(batch) == ("prefill", [(2, 40, 4)]), f"expected request 2's last 4 prompt tokens, got {show(batch)}"
    # The other way round: the first in this order does not fit, a later one would.
    s = lpm_sched()
    shared = cached(s, token_ids(40, 130))
    prefilled(s, add_waiting(s, 0, shared + token_ids(4, 18), max_tokens=920, pages=10))
    plain = add_waiting(s, 1, token_ids(20, 21), max_tokens=28, pages=0)  # 12 pages: would fit
    sharing = add_waiting(s, 2, shared + token_ids(4, 22), max_tokens=80, pages=10)  # 31 pages, 21 of them new
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    if not (plain.table_idx < 0 and sharing.table_idx < 0 and items_of(batch) == ("decode", [(0, 44, 1)])):
        raise Mistake(
            "15 pages are left beside the running request. In longest-prefix order request 2 comes first and does "
            "not fit (it needs 21 new pages); request 1 (arrived first, nothing cached) would fit in 12. Nobody "
            "overtakes the first request in this order that does not fit: stop there, as the base part stops at the "
            "head of the queue, and decode. Yours: "
            f"{show(batch)}; admitted: {[u for u in (1, 2) if s.reqs[u].table_idx >= 0]} ({pages_of(s, order)} cached pages)",
            "nobody overtakes the first request in this order that does not fit: stop there and decode"
            if plain.table_idx >= 0 and sharing.table_idx < 0
            else "",
        )
    # An admission's reserve() evicts the cached prefix a later request was ranked by.
    s = lpm_sched()
    shared_a, shared_b = cached(s, token_ids(12, 81)), cached(s, token_ids(8, 82))  # 3 pages, then 2
    ballast(s, s.cache.num_free)  # the only room left: those 5 cached pages
    add_waiting(s, 0, token_ids(3, 83), max_tokens=1, pages=0)
    add_waiting(s, 1, shared_b + token_ids(1, 84), pages=2)
    add_waiting(s, 2, shared_a + token_ids(1, 85), max_tokens=3, pages=3)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    if items_of(batch) != ("prefill", [(2, 12, 1)]):
        page_ids = sorts_by_page_ids(fn)  # ranked by the page ids, not the page count: say so first
        rematched = s.reqs[0].table_idx >= 0 and s.reqs[1].table_idx < 0
        hint = PAGE_IDS if page_ids else REMATCHED if rematched else ""
        raise Mistake(
            "requests 0 (nothing cached), 1 (2 cached pages) and 2 (3 cached pages) wait, and the only room left "
            "is those 5 cached pages. The order, fixed before the batch: 2, 1, 0. Admitting request 2 reserves one "
            "new page for its last prompt token, which evicts request 1's unlocked cached pages; request 1, next in "
            "that order, now needs 5 pages and does not fit, so nobody after it is admitted: the batch is request "
            f"2's last token alone. Yours: {show(batch)}; admitted: {[u for u in order if s.reqs[u].table_idx >= 0]}"
            f"{page_ids}",
            hint,
        )
    check_matched_before_the_chunk(fn)  # a chunked request's reserve, before the new ones are ranked


def case_cache_changes(fn):
    # Request 0 decodes in the only row (max_running 1) while requests 1 and 2 wait, nothing of theirs
    # cached. Then request 0 finishes and its prompt goes into the prefix cache: request 2's starts with it.
    s = lpm_sched(max_running_requests=1)
    shared = token_ids(16, 140)
    first = prefilled(s, add_waiting(s, 0, shared, pages=0))
    add_waiting(s, 1, token_ids(12, 141), pages=0)
    add_waiting(s, 2, shared + token_ids(4, 142), pages=0)
    batch = decide_in_order(fn, s)
    want = ("decode", [(0, 16, 1)])
    assert items_of(batch) == want, f"request 0 holds the only row: expected {show_expected(want)}, got {show(batch)}"
    apply(s, batch)
    s.running.remove(first)  # request 0 finishes, as the scheduler's _finish does it
    s.cache.release(first, cache_it=True)
    del s.reqs[0]
    assert prefix_pages(s, s.reqs[2]) == 4, "setup: request 0's prompt should be cached now"
    batch = decide_in_order(fn, s)
    if items_of(batch) != ("prefill", [(2, 16, 4)]):
        raise Mistake(
            "requests 1 and 2 waited while request 0 decoded, with no cached prefix then. Request 0 has finished "
            "since, and its prompt is in the prefix cache now: request 2's prompt starts with it (4 cached pages "
            f"now), request 1 has none, so request 2 goes first. Yours: {show(batch)} (cached prefix pages now: "
            f"{pages_of(s, [1, 2])})",
            "match every waiting request again at every decision: the prefix cache changes between steps (a "
            "finished request caches its pages, eviction removes some), so a count kept from an earlier step is stale"
            if items_of(batch) == ("prefill", [(1, 0, 12)])
            else "",
        )


def case_naive_cache(fn):
    s = lpm_sched(cache="naive")
    for uid, n in enumerate([20, 8, 30]):
        add_waiting(s, uid, token_ids(n, 30 + uid), pages=0)
    order = [r.uid for r in s.waiting]
    batch = decide_in_order(fn, s)
    check_new_join(fn, s, batch, started=[0])
    expect_order(
        batch,
        [0, 1, 2],
        s,
        "the naive cache caches nothing, so every request matches 0 pages: all tie, and the order is first "
        "come, first served (prompts of 20, 8 and 30 tokens: their length does not matter)",
        order,
    )


# ---------------------------------------------------------------------------- the real engine
# Request 0 runs alone (in two chunks) and its prompt's pages stay in the prefix cache. Then
# request 1 (unrelated) and request 2 (request 0's prompt, continued) arrive together, 1 first.
# First come, first served admits 1 first; longest prefix match admits 2 first, and the budget of
# 9 tokens then cuts request 1's prompt into a chunk that continues next step. The order changes
# no request's tokens.
ENGINE_REQUESTS = [
    # (uid, arrives before step, text, max_tokens)
    (0, 1, "The capital of France is Paris. The capital of Germany is", 2),
    (1, 4, "My favourite colour is", 4),
    (2, 4, "The capital of France is Paris. The capital of Germany is Berlin. The capital of Italy is", 4),
]
ENGINE_BUDGET = 9


def _run(fn) -> tuple[list, dict, dict, Scheduler]:
    s = new_scheduler(max_prefill_tokens=ENGINE_BUDGET, cache="radix")
    plays = [
        (uid, step, s.tokenizer.encode(text), SamplingParams(max_tokens=max_tokens, ignore_eos=True))
        for uid, step, text, max_tokens in ENGINE_REQUESTS
    ]
    student = fn is not reference_lpm and fn is not package_schedule_next_batch
    return run_steps(s, fn, plays, student, max_steps=60, keep_order=True)


def _first_admitted(steps) -> list[int]:
    """The uids in the first prefill batch with request 1 or 2 in it."""
    for step in steps:
        if step is not None and step[0] == "prefill" and step[1][0][0] != 0:
            return [uid for uid, _, _ in step[1]]
    return []


def _reference_runs():
    def compute():
        steps, tokens, reasons, s = _run(reference_lpm)
        fcfs_steps, fcfs_tokens, _, _ = _run(package_schedule_next_batch)
        assert s.reqs == {} and len(reasons) == 3, "setup: the reference run changed"
        assert _first_admitted(steps) == [2, 1] and _first_admitted(fcfs_steps) == [1, 2], (
            "setup: longest prefix match should admit request 2 first, first come, first served request 1"
        )
        assert tokens == fcfs_tokens, "setup: the order should not change any request's tokens"
        return steps, tokens, reasons, fcfs_steps

    return remember("schedule_lpm", compute)


def case_real_engine(fn):
    fail_fast_if_stub(fn)
    require_passing([c for c in CASES if c.hand_unit], fn)
    ref_steps, ref_tokens, ref_reasons, fcfs_steps = _reference_runs()
    try:
        steps, tokens, reasons, s = _run(fn)
    except OutOfPages as e:
        raise AssertionError(
            f"the engine ran out of KV pages with your scheduling ({e}): a request was admitted whose "
            "whole run did not fit, and it ran out half-way"
        ) from None
    for n, (got, want) in enumerate(zip(steps, ref_steps), 1):
        if got != want:
            fcfs = fcfs_steps[n - 1] if n <= len(fcfs_steps) else None
            note = " (that is the first come, first served order of the base part)" if got == fcfs else ""
            raise AssertionError(
                f"step {n}: longest prefix match runs {show_expected(want) if want else 'nothing'}, yours ran "
                f"{show_expected(got) if got else 'nothing'}{note}. Request 2 continues request 0's prompt, "
                "whose pages are in the prefix cache; request 1 arrived at the same step with nothing cached"
            )
    assert len(steps) == len(ref_steps), f"{len(steps)} steps, longest prefix match needs {len(ref_steps)}"
    assert tokens == ref_tokens and reasons == ref_reasons, "the requests got different tokens from the reference"
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages, "KV pages are missing after every request finished"


CASES = [
    Case(
        "stretch: the longest cached prefix goes first",
        case_longest_first,
        "sort the requests not yet admitted by len(pages) of scheduler.cache.match(req), largest first",
    ),
    Case("stretch: ties keep arrival order", case_ties, "a stable sort on the cached length alone keeps arrival order"),
    Case(
        "stretch: whole pages, as admit counts them",
        case_whole_pages,
        "compare the page count scheduler.cache.match(req) returns: whole pages, the last prompt token left out",
    ),
    Case(
        "stretch: no cached prefix, arrival order",
        case_no_prefix_fcfs,
        "requests that match nothing all tie: they keep their arrival order",
    ),
    Case(
        "stretch: the LPM_MAX_WAITING threshold",
        case_threshold,
        "first come, first served when len(scheduler.waiting) > LPM_MAX_WAITING, longest prefix match otherwise",
    ),
    Case(
        "stretch: only new requests are reordered",
        case_only_new_requests,
        "a request with req.table_idx >= 0 in scheduler.waiting keeps going first; the decode batch is unchanged",
    ),
    Case(
        "stretch: cached pages make room",
        case_room_for_the_cached,
        "the base part's admission rule, applied in the new order",
    ),
    Case(
        # The base part's own margins (edges.py), one request waiting so the order plays no part: an
        # admission that counts too few pages is caught here, not only in the base part's score.
        "stretch: memory, exact fit and one page short",
        case_memory_margins,
        "the base part's admission rule: each request's whole run in pages, rounded up per request",
    ),
    Case(
        "stretch: the cache changes while requests wait",
        case_cache_changes,
        "the order is decided at every step, by what scheduler.cache.match(req) returns then",
    ),
    Case(
        "stretch: no prefix cache, first come first served",
        case_naive_cache,
        "with the naive cache every match is empty: the order is the arrival order",
    ),
    Case(
        "stretch: in the real engine",
        case_real_engine,
        "request 2's prompt is cached in part: it is admitted before request 1; compare your batches",
        engine=True,
    ),
]
CASES.append(schedule_case(reference_lpm, lpm=True))
SYMBOL = "schedule_next_batch_lpm"
SOLUTION = reference_lpm
REFERENCES = [package_schedule_next_batch]  # the base part's package answer is not an answer here either
