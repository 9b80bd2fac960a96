"""Exercise 5's edge cases: the decisions where a right answer and a near miss part.

Each case builds the scheduler's state by hand and looks at one decision (or a few), at the margin
of a rule: a token budget that fits exactly or misses by one token; chunks that end inside a page,
on a page boundary or one token past it; memory for a request's whole run that is exactly enough or
one page short, with lengths that are not multiples of the page size; a cached prefix on pages a
running request locks, and one on pages no request holds, while memory is tight; a request part-way
through its chunked prefill beside a new one, when the rows or the pages run short; the same
requests in both arrival orders. Where a failure can come from more than one way of counting, the
case asks the answer a second, nearby question (a control) before it names the mistake.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.core import expect as holds
from minisgl_edu.grading.fixtures import apply, cached, decoding, prefilled, token_ids, waiting
from minisgl_edu.grading.schedule.admitted_this_call import (
    HELD_FROM_CACHED_LEN,
    counts_held_from_cached_len,
    two_new,
)
from minisgl_edu.grading.schedule.budget_decoding import check_budget_beside_decoding
from minisgl_edu.grading.schedule.checks import (
    admits,
    admitted_now,
    decide,
    expect,
    items_of,
    not_admitted,
    sched,
)
from minisgl_edu.grading.schedule.held_from_total_len import HELD_FROM_TOTAL_LEN, counts_held_from_total_len
from minisgl_edu.grading.schedule.held_of_the_new import NEW_REQUESTS_HELD_PAGES, credits_the_new_requests_pages
from minisgl_edu.grading.schedule.page_rounding import refuse_full_last_page
from minisgl_edu.grading.schedule.page_sizes import other_page_sizes
from minisgl_edu.grading.schedule.queue_claims import QUEUE_COUNTED, counts_the_queue_behind
from minisgl_edu.kvcache import pages_for


def case_budget_margins(fn):
    # Prompts of 13, 7 and 5 tokens (pages of 4): the budget fits them exactly, misses by one
    # token, or leaves one or two tokens over for the next request.
    plays = [
        (20, [13, 7], [(0, 0, 13), (1, 0, 7)], "13 + 7 = 20: both prompts fit exactly", ""),
        (
            19,
            [13, 7],
            [(0, 0, 13), (1, 0, 6)],
            "13 + 7 is one token over 19: the second prompt gets a 6-token chunk",
            "what is left of the budget goes to the next request as a chunk",
        ),
        (
            21,
            [13, 7, 5],
            [(0, 0, 13), (1, 0, 7), (2, 0, 1)],
            "13 + 7 leaves one token of 21: the third request gets a 1-token chunk",
            "a chunk may be as small as one token, and need not fill a page: stop only when nothing "
            "of the budget is left (the next step continues the prompt where this one ended)",
        ),
        (
            14,
            [13, 7],
            [(0, 0, 13), (1, 0, 1)],
            "13 of 14: the second prompt gets a 1-token chunk",
            "a chunk may be as small as one token, and need not fill a page: stop only when nothing "
            "of the budget is left",
        ),
    ]
    for budget, lengths, expected, what, hint in plays:
        s = sched(budget=budget)
        for uid, n in enumerate(lengths):
            waiting(s, uid, n)
        batch = decide(fn, s)
        expect(batch, ("prefill", expected), f"budget {budget}, prompts of {lengths} tokens: {what}", hint)
    check_budget_beside_decoding(fn)


def case_page_boundaries(fn):
    # One 13-token prompt (pages of 4), max_tokens 2: its whole run is 15 tokens, 4 pages.
    plays = {
        6: [(0, 6), (6, 6), (12, 1)],  # chunks end inside pages: 2, 3, 4 pages
        8: [(0, 8), (8, 5)],  # the first chunk ends exactly at a page boundary: 2 pages, then 4
        9: [(0, 9), (9, 4)],  # one token past it: 3 pages, then 4
    }
    for budget, chunks in plays.items():
        s = sched(budget=budget)
        req = waiting(s, 0, 13, max_tokens=2)
        for n, (start, num) in enumerate(chunks, 1):
            batch = decide(fn, s)  # checks that it holds exactly pages_for(start + num) pages
            expect(
                batch,
                ("prefill", [(0, start, num)]),
                f"a 13-token prompt with a budget of {budget}, step {n}",
                "each step continues the prompt at req.cached_len with min(req.remaining_prompt, budget) tokens",
            )
            apply(s, batch)
        batch = decide(fn, s)
        expect(batch, ("decode", [(0, 13, 1)]), f"a 13-token prompt with a budget of {budget}, after its prompt")
        held = s.cache.held_pages(req)
        holds(
            held == 4,
            f"after its prompt and one decode step, request 0 (15 tokens at most) holds {held} pages, not "
            "pages_for(14, 4) = 4",
            "reserve up to each item's end, never a page count per chunk",
        )


def _margins(max_tokens: int):
    s = sched()
    running = decoding(s, 0, 9, max_tokens=504)
    return s, running, waiting(s, 1, 6, max_tokens=max_tokens)


def _after_a_boundary(max_tokens: int):
    # Request 0 runs to exactly 512 tokens (128 pages, 3 held): one token less changes nothing there.
    s = sched()
    running = decoding(s, 0, 9, max_tokens=503)
    return s, running, waiting(s, 1, 6, max_tokens=max_tokens)


def _last_token_left_out(fn) -> bool:
    """`fn` counts a request's run one token short: it admits a run of 513 tokens (129 pages, one past
    a page boundary) where 128 pages are left, and refuses one of 514 tokens (rounded down, still 128)."""
    return admits(fn, *_after_a_boundary(507)[::2]) and not admits(fn, *_after_a_boundary(508)[::2])


def _after_outputs(outputs: int):
    # Request 0's run is 9 + 505 = 514 tokens (129 pages) whatever it has output so far; with 1 or 2
    # outputs it holds 3 pages. Request 1's run (6 + 503 = 509 tokens, 128 pages) is one page short.
    s = sched()
    running = decoding(s, 0, 9, max_tokens=505)
    for _ in range(outputs - 1):
        s.cache.reserve(running, running.total_len)
        apply(s, Batch("decode", [ScheduledReq(running, running.total_len - 1, 1)]))
    return s, waiting(s, 1, 6, max_tokens=503)


def _count_moves_with_outputs(fn) -> bool:
    """`fn`'s verdict on the same runs changes once the running request has output one more token
    (1 then 2 of its 505): its count of a request's pages reads a length that grows or shrinks as the
    request generates, not its whole run, which is fixed at admission."""
    return admits(fn, *_after_outputs(1)) != admits(fn, *_after_outputs(2))


LAST_TOKEN = (
    "a request's worst case is pages_for(len(req.input_ids) + req.max_new_tokens, page_size): count every "
    "token of its run, the last output token's page included (not len(input_ids) + max_new_tokens - 1)"
)


def case_memory_margins(fn):
    # Lengths that are not multiples of the page size (4): 513 tokens take 129 pages, 505 take 127,
    # 509 take 128. Request 0 runs (9-token prompt, 3 pages held); 253 of 256 pages are available.
    for max_tokens, final, fits in [(499, 505, True), (503, 509, False)]:
        s, running, req = _margins(max_tokens)
        assert s.cache.num_available == 253 and s.outstanding_pages([running]) == 126, "setup: the pages changed"
        need = pages_for(final, s.cache.page_size)
        batch = decide(fn, s)
        if fits:
            if req.table_idx < 0 and credits_the_new_requests_pages(fn, _margins, _tight):
                raise Mistake(
                    f"request 1 was not admitted, but its run (6 + {max_tokens} = {final} tokens) takes {need} pages "
                    "and request 0 (513 tokens, 129 pages, 3 held) may still take 126: 253, exactly the 253 "
                    "available. Your count wants 3 pages to spare here, where request 1 holds none, and 1 where "
                    "request 1 holds 4 pages of a cached prefix and request 0 holds 5: it takes request 1's held "
                    "pages off request 0's need, not request 0's own",
                    NEW_REQUESTS_HELD_PAGES,
                )
            admitted_now(
                s,
                req,
                f"its run (6 + {max_tokens} = {final} tokens) takes {need} pages and request 0 (513 tokens, "
                "129 pages, 3 held) may still take 126: 253, exactly the 253 available, so it fits",
                "a request fits when the sum is <= cache.num_available: equal fits",
                applies=lambda: admits(fn, *_margins(max_tokens - 4)[::2]),  # one page to spare
            )
            expect(batch, ("prefill", [(1, 0, 6)]), "request 1 fits exactly")
        else:
            if req in s.waiting and req.table_idx >= 0 and _last_token_left_out(fn):
                raise Mistake(
                    f"request 1 was admitted, but its run (6 + {max_tokens} = {final} tokens, one past a page "
                    f"boundary) takes {need} pages and request 0 (513 tokens, 129 pages, 3 held) may still take "
                    "126: 254, one page more than the 253 available. Your count leaves out each run's last token",
                    LAST_TOKEN,
                )
            if req in s.waiting and req.table_idx >= 0 and _count_moves_with_outputs(fn):
                raise Mistake(
                    f"request 1 was admitted, but its run (6 + {max_tokens} = {final} tokens) takes {need} pages and "
                    "request 0 (9 + 504 = 513 tokens, 129 pages, 3 held) may still take 126: 254, one page more than "
                    "the 253 available. Your count of a request's pages changes as it generates: with request 0's "
                    "run fixed at 9 + 505 tokens, you admit request 1 after request 0's second output token but not "
                    "after its first (or the other way round)",
                    "a request's pages come from its whole run, len(req.input_ids) + req.max_new_tokens, fixed at "
                    "admission: do not subtract (or add) the tokens it has output so far; what it already holds "
                    "comes off as held pages (cache.held_pages)",
                )
            if req.table_idx >= 0 and counts_held_from_total_len(fn):
                raise Mistake(
                    f"request 1 was admitted, but its run ({final} tokens, {need} pages) and request 0's 126 pages "
                    "to come are 254, one more than the 253 available. Your count lets request 1 be short by "
                    "as many pages as its prompt takes (2 for 6 tokens, 4 for 13), and by one more once request "
                    "0's length is one past a page boundary: it reads held pages from each request's length",
                    HELD_FROM_TOTAL_LEN,
                )
            not_admitted(
                s,
                req,
                f"its run (6 + {max_tokens} = {final} tokens) takes {need} pages and request 0 (513 tokens, "
                "129 pages, 3 held) may still take 126: 254, one page more than the 253 available",
                "count whole pages per request, rounded up, pages_for(len(prompt) + max_new_tokens, "
                "page_size): each request's last page is partly empty and no other request can use it. A "
                "sum of tokens converted into pages once, or a division rounded down, counts too few",
                applies=lambda: not admits(fn, *_margins(max_tokens + 40)[::2]),  # ten pages short
            )
            expect(batch, ("decode", [(0, 9, 1)]), "request 1 is one page short: decode the running request")
    other_page_sizes(fn)  # the same margins with pages of 8 and of 2 tokens
    _two_new_exact_fit(fn)  # and an exact fit for two requests admitted in one call


def _two_new_exact_fit(fn) -> None:
    # Two new requests in one call, 127 + 129 = 256 pages for the 256 free: request 0, admitted
    # first, holds its chunk's 2 pages before request 1 is counted, its cached_len still 0.
    s, _, req = two_new(6, 0)
    batch = decide(fn, s)
    why = (
        "request 0 (508 tokens, 127 pages, 2 held for its chunk) and request 1 (516 tokens, 129 pages) "
        "need 125 + 129 = 254 more pages, exactly the 254 left once request 0's chunk has its pages"
    )
    if req.table_idx < 0 and counts_held_from_cached_len(fn):
        raise Mistake(
            f"request 1 was not admitted, but {why}. Your count wants as many pages to spare as request 0's "
            "chunk holds (2 for a 6-token prompt, 4 for a 13-token one): it counts the pages request 0 holds "
            "from its cached_len, which is still 0 in this call",
            HELD_FROM_CACHED_LEN,
        )
    refuse_full_last_page(fn, req, why)  # 516 tokens: an odd number of whole pages
    admitted_now(s, req, why)
    expect(batch, ("prefill", [(0, 0, 6), (1, 0, 6)]), "both new requests fit exactly: prefill both")


PREFIX = token_ids(16, 50)  # 16 tokens, 4 pages of the prefix cache


def _tight(max_tokens: int):
    s = sched(cache="radix")
    s.cache.prefix_cache.insert(PREFIX, s.cache.allocator.allocate(4))
    s.cache.prefix_cache.insert(token_ids(40, 60), s.cache.allocator.allocate(10))
    running = decoding(s, 0, PREFIX + token_ids(3, 70), max_tokens=382)  # 401 tokens: 101 pages
    return s, running, waiting(s, 1, PREFIX + token_ids(5, 80), max_tokens=max_tokens)


def case_shared_prefix_tight(fn):
    # The 16-token PREFIX is cached on 4 pages that running request 0 holds (locked, so neither
    # free nor evictable); 10 more cached pages no one uses are evictable. Request 1's prompt
    # starts with PREFIX: cache.admit gives it those 4 pages. 251 pages are available.
    for max_tokens, final, fits in [(615, 636, True), (619, 640, False)]:
        s, running, req = _tight(max_tokens)
        assert (running.prefix_len, s.cache.held_pages(running)) == (16, 5), "setup: no prefix hit"
        assert s.cache.num_available == 251 and s.cache.prefix_cache.num_cached == 14, "setup: the pages changed"
        need = pages_for(final, s.cache.page_size)
        batch = decide(fn, s)
        if fits:
            why = (
                f"its prompt starts with 16 tokens cached on 4 pages that running request 0 holds, and "
                f"cache.admit gives them to request 1 too: its run ({final} tokens, {need} pages) needs "
                f"{need - 4} pages more, request 0 may still take 96, and 96 + {need - 4} = 251, exactly "
                "the 251 available"
            )
            refuse_full_last_page(fn, req, why)
            admitted_now(
                s,
                req,
                why,
                "count after cache.admit(req): the pages a request holds then include its cached prefix, which "
                "it does not need again (and a sum equal to cache.num_available fits)",
                applies=lambda: admits(fn, *_tight(max_tokens - 16)[::2]),  # four pages to spare
            )
            expect(
                batch,
                ("prefill", [(1, 16, 5)]),
                "request 1 fits, and its prompt continues after its 16 cached tokens",
                "the chunk starts at req.cached_len, which cache.admit sets to the cached prefix's length",
            )
        else:
            not_admitted(
                s,
                req,
                f"its run ({final} tokens, {need} pages, 4 of them its cached prefix) needs {need - 4} pages "
                f"more and request 0 may still take 96: 252, one more than the 251 available",
                "compare with cache.num_available: the prefix pages a running request holds are locked, neither "
                "free nor evictable, so not every cached page counts as available; subtract a request's cached "
                "prefix once, as pages it holds after cache.admit, not again as a match (and round each "
                "request's pages up, pages_for)",
                applies=lambda: not admits(fn, *_tight(max_tokens + 40)[::2]),  # ten pages short
            )
            expect(batch, ("decode", [(0, 19, 1)]), "request 1 is one page short: decode the running request")
            holds(
                (req.cached_len, req.prefix_len) == (0, 0),
                f"request 1 was not admitted, but its cached_len and prefix_len are {req.cached_len} and "
                f"{req.prefix_len}",
                "after cache.release(req, cache_it=False), set req.cached_len and req.prefix_len back to 0",
            )
        assert s.cache.prefix_cache.num_evictable == 10, (
            f"after your decision {s.cache.prefix_cache.num_evictable} cached pages are evictable, not 10: "
            "request 0's prefix pages must stay locked (by request 0, and by request 1 if admitted)"
        )


def case_both_orders(fn):
    # The same two waiting requests, arriving in one order and then in the other. uids are not
    # handed out in arrival order (several tokenizer workers send requests on), so request 2 may
    # arrive first: scheduler.waiting holds them in arrival order.
    order_hint = (
        "first come, first served is the order of scheduler.waiting (arrival), not of the uids: "
        "consider the requests in the queue's order, and stop at the first that does not fit"
    )
    wanted = {1: [(1, 0, 13), (2, 0, 5)], 2: [(2, 0, 7), (1, 0, 11)]}
    for order in ([1, 2], [2, 1]):
        # Prompts of 13 and 7 tokens with a budget of 18: the one that came first runs whole.
        s = sched(budget=18)
        for uid in order:
            waiting(s, uid, 13 if uid == 1 else 7)
        batch = decide(fn, s)
        swapped = items_of(batch) == ("prefill", wanted[order[1]])  # the other arrival order's batch
        expect(
            batch,
            ("prefill", wanted[order[0]]),
            f"prompts of 13 (request 1) and 7 tokens (request 2), budget 18, request {order[0]} first",
            order_hint if swapped else "",
        )
    for order in ([1, 2], [2, 1]):
        # Request 1 (40 + 200 tokens, 60 pages) does not fit beside running request 0; request 2
        # (8 + 40 tokens, 12 pages) does.
        s = sched()
        decoding(s, 0, 8, max_tokens=900)
        for uid in order:
            waiting(s, uid, 40 if uid == 1 else 8, max_tokens=200 if uid == 1 else 40)
        batch = decide(fn, s)
        arrived = f"requests {order[0]} then {order[1]} arrive (request 1 does not fit, request 2 does)"
        if order == [1, 2]:
            overtook = items_of(batch) == ("prefill", [(2, 0, 8)])
            hint = (
                "stop at the first waiting request that does not fit, even if one behind it would" if overtook else ""
            )
            expect(batch, ("decode", [(0, 8, 1)]), f"{arrived}: request 2 waits behind request 1", hint)
        else:
            queued = counts_the_queue_behind(fn) if items_of(batch) != ("prefill", [(2, 0, 8)]) else ""
            what = f"{arrived}: request 2 came first and fits{queued}"
            expect(batch, ("prefill", [(2, 0, 8)]), what, QUEUE_COUNTED if queued else "")
    s = sched()
    first, second = waiting(s, 1, 9), waiting(s, 2, 6)
    prefilled(s, second)  # request 2's prompt is done first (as under LPM): running is [2, 1]
    prefilled(s, first)
    batch = decide(fn, s)
    expect(
        batch,
        ("decode", [(2, 6, 1), (1, 9, 1)]),
        "request 1 arrived first, but request 2's prompt was done first: scheduler.running is [request 2, request 1]",
        "decode the running requests in scheduler.running's order (the order their prompts were done in), not "
        "in arrival order (scheduler.reqs) nor by uid",
    )


def _unlocked(max_tokens: int):
    # PREFIX is cached on 4 pages that no request holds (evictable: cache.num_available counts them).
    # Request 0 runs without it (19-token prompt, 401 tokens at most: 101 pages, 5 held, 96 to come).
    s = sched(cache="radix")
    cached(s, PREFIX)
    running = decoding(s, 0, token_ids(19, 70), max_tokens=382)
    return s, running, waiting(s, 1, PREFIX + token_ids(5, 80), max_tokens=max_tokens)


UNLOCKED_PREFIX = (
    "count after cache.admit(req): admit locks the request's cached prefix, so those pages come off its need "
    "(it holds them) and off cache.num_available (no longer evictable) together. Read cache.num_available "
    "after admit, and count the prefix once, as pages the request holds (not again as the pages of cache.match)"
)


def case_unlocked_prefix_tight(fn):
    # Request 1's prompt starts with PREFIX: cache.admit gives it those 4 pages and locks them. Before
    # admission 251 pages are available (247 free, 4 evictable); after it, 247.
    for max_tokens, final, fits in [(599, 620, True), (603, 624, False)]:
        s, running, req = _unlocked(max_tokens)
        assert (running.prefix_len, s.cache.held_pages(running)) == (0, 5), "setup: request 0 changed"
        assert s.cache.num_available == 251 and s.cache.prefix_cache.num_evictable == 4, "setup: the pages changed"
        need = pages_for(final, s.cache.page_size)
        batch = decide(fn, s)
        prefix = (
            "its prompt starts with 16 tokens cached on 4 pages that no request holds (evictable, so "
            "cache.num_available counts them: 251); cache.admit gives them to request 1 and locks them (then "
            f"247 are available): its run ({final} tokens, {need} pages) needs {need - 4} pages more and "
            f"request 0 may still take 96"
        )
        if fits:
            refuse_full_last_page(
                fn, req, f"{prefix}: 96 + {need - 4} = 247, exactly the 247 available after admission"
            )
            admitted_now(
                s,
                req,
                f"{prefix}: 96 + {need - 4} = 247, exactly the 247 available after admission",
                UNLOCKED_PREFIX,
                applies=lambda: admits(fn, *_unlocked(max_tokens - 16)[::2]),  # four pages to spare
            )
            expect(batch, ("prefill", [(1, 16, 5)]), "request 1 fits, after its 16 cached tokens")
        else:
            not_admitted(
                s,
                req,
                f"{prefix}: 96 + {need - 4} = 248, one more than the 247 available after admission",
                UNLOCKED_PREFIX,
                applies=lambda: not admits(fn, *_unlocked(max_tokens + 16)[::2]),  # five pages short
            )
            expect(batch, ("decode", [(0, 19, 1)]), "request 1 is one page short: decode the running request")


def _beside_a_head(chunked: bool, max_running: int, head_tokens: int, new_tokens: int):
    """Request 1 (a 16-token prompt, `head_tokens` to generate) is part-way through its chunked
    prefill, 14 tokens done (`chunked`: its last 2 go on the 4 pages it holds, so its next chunk
    takes no page), or has finished its prompt and runs; request 2 (8 tokens, `new_tokens` to
    generate) waits behind it, not admitted. With max_running 2, request 0 runs too."""
    s = sched(max_running_requests=max_running)
    if max_running < 3:
        decoding(s, 0, 9)
    head = waiting(s, 1, 16, max_tokens=head_tokens)
    if chunked:
        s.cache.admit(head)
        s.cache.reserve(head, 14)
        apply(s, Batch("prefill", [ScheduledReq(head, 0, 14)]))
    else:
        prefilled(s, head)
    return s, head, waiting(s, 2, 8, max_tokens=new_tokens)


HEAD = (
    "request 1 is part-way through its chunked prefill: admitted at an earlier step, it holds a page-table "
    "row and waits at the head of scheduler.waiting, not in scheduler.running"
)
HEAD_ROWS = (
    "a request part-way through its chunked prefill (in scheduler.waiting with req.table_idx >= 0, admitted at "
    "an earlier step) is admitted: count it against scheduler.max_running, like a running request"
)
HEAD_PAGES = (
    "a request part-way through its chunked prefill (in scheduler.waiting with req.table_idx >= 0, admitted at "
    "an earlier step) is admitted: its whole run, pages_for(len(req.input_ids) + req.max_new_tokens) minus the "
    "pages it holds, counts in the sum like a running request's"
)


def admits_beside_a_chunked_head(fn) -> bool:
    """Whether `fn` admits request 2 with max_running 2 while request 0 runs and request 1, admitted at
    an earlier step, waits with a row part-way through its prompt: an answer that counts only
    scheduler.running against the limit does; one that counts every row, even if only once before
    its loop, does not."""
    s, _, new = _beside_a_head(True, 2, 8, 5)
    return admits(fn, s, new)


def case_beside_a_chunked_head(fn):
    # Rows: request 0 runs and request 1 is part-way through its prompt: with max_running 2, request 2
    # must wait. Pages: request 1's whole run (600 tokens, 150 pages, 4 held) and request 2's (428
    # tokens, 107 pages) are one page more than the 252 available. The control: the same scene with
    # request 1 running instead, where an answer that counts the running requests refuses request 2.
    plays = [
        (2, 8, 5, "rows", HEAD_ROWS),
        (4, 584, 420, "pages", HEAD_PAGES),
    ]
    for max_running, head_tokens, new_tokens, short, hint in plays:
        scene = (max_running, head_tokens, new_tokens)
        s, head, new = _beside_a_head(True, *scene)
        if short == "rows":
            why = f"{HEAD}; with request 0 running, that is scheduler.max_running = 2 requests admitted already"
        else:
            others, need = s.outstanding_pages([head]), s.outstanding_pages([new])
            why = (
                f"{HEAD}, and its whole run may still take {others} pages; request 2's takes {need}: "
                f"{others + need}, one more than the {s.cache.num_available} available"
            )

        def forgets_the_head() -> bool:  # the same scene with request 1 running instead: refused there
            return not admits(fn, *_beside_a_head(False, *scene)[::2])

        try:
            batch = decide(fn, s)
        except AssertionError:
            taken = new.table_idx >= 0 or len(s.cache.page_table.used_rows()) > max_running
            if short == "rows" and taken and forgets_the_head():
                raise Mistake(f"request 2 was admitted, but {why}", hint) from None
            raise
        not_admitted(s, new, why, hint, applies=forgets_the_head)
        expect(
            batch,
            ("prefill", [(1, 14, 2)]),
            f"request 1 continues its prompt; request 2 waits ({short})",
            "a request part-way through its prompt gets its next chunk first, without being admitted again",
        )
