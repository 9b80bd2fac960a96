"""Exercise 5 — scheduling: `schedule_next_batch(scheduler) -> Batch | None`.

The scheduler calls it once per step (`Scheduler.schedule_fn`, from `_schedule_next_batch`) to
decide which tokens the engine computes next. The unit cases build a scheduler's state by hand
(requests waiting, part-way through a chunked prefill, decoding, pages held by others) and look
at the one decision; no model runs for them. Several play the edges of the contract: budgets and
memory that fit exactly or miss by one token or one page, with lengths that are not multiples of
the page size; chunks that end on a page boundary or one token past it; a prefix cached on pages
that running requests hold while memory is tight; the same requests in both arrival orders. The
two engine cases run requests on the default model with the student's function deciding every
step (the second with more requests than fit at once, over many steps) and compare each batch,
the tokens and the pages with the engine's own scheduler.

The exercise text states the contract only; the help a student needs after a failure is in the
failed assertion's message (what was wrong, and a hint for that assertion), and each case's hint
names the part of the contract it plays.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.core import expect as holds
from minisgl_edu.grading.fixtures import FAKE_TOKEN, apply, decoding, prefilled, token_ids, waiting
from minisgl_edu.grading.schedule.checks import (
    admits,
    admits_when_unclamped,
    admitted_now,
    decide,
    expect,
    items_of,
    not_admitted,
    sched,
    show,
)
from minisgl_edu.grading.schedule.engine import engine_cases
from minisgl_edu.grading.schedule.scenes import schedule_case
from minisgl_edu.kvcache import pages_for
from minisgl_edu.scheduler.scheduler import schedule_next_batch as reference


# ---------------------------------------------------------------------------- unit cases
def case_nothing(fn):
    s = sched()
    batch = decide(fn, s)
    holds(
        batch is None,
        f"nothing waits and nothing runs: return None, not {show(batch)}",
        "return None when nothing waits and nothing runs: None is how the loop learns that there is nothing "
        "to do (it then waits for a message)",
    )


def case_prefill_first(fn):
    s = sched()
    decoding(s, 0, 12)
    waiting(s, 1, 9)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(1, 0, 9)]),
        "request 1 waits while request 0 decodes: prefill comes first, so a new request gets its "
        "first token without waiting for the others to finish",
        "look at scheduler.waiting before scheduler.running: a decode batch only when no prompt token can run",
    )


def case_decode(fn):
    s = sched()
    decoding(s, 0, 12).output_ids += [FAKE_TOKEN] * 3  # 12 + 4 tokens: the newest at position 15
    decoding(s, 1, 5)
    batch = decide(fn, s)
    expect(
        batch,
        ("decode", [(0, 15, 1), (1, 5, 1)]),
        "nobody waits: decode every running request, in scheduler.running order, one token each",
        "a decode item computes the newest token, the one at position req.total_len - 1: "
        "ScheduledReq(req, req.total_len - 1, 1)",
    )


def case_several_prompts(fn):
    s = sched(budget=64)
    for uid, n in enumerate([5, 7, 6]):
        waiting(s, uid, n)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(0, 0, 5), (1, 0, 7), (2, 0, 6)]),
        "three short prompts (18 tokens) wait and the budget is 64: prefill them together, in order",
        "one prefill batch takes waiting requests in queue order as long as the budget lasts, not one request a step",
    )


def case_budget(fn):
    s = sched(budget=16)
    for uid, n in enumerate([10, 6, 5]):
        waiting(s, uid, n)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(0, 0, 10), (1, 0, 6)]),
        "prompts of 10, 6 and 5 tokens with a budget of 16: the first two use it up exactly",
        "each request takes min(req.remaining_prompt, what is left of the budget); once nothing is "
        "left, stop (no item of 0 tokens)",
    )
    holds(
        s.reqs[2].table_idx < 0,
        "request 2 is not in the batch, so it must not be admitted (no row, no pages)",
        "stop before admitting anyone once the budget is used up",
    )
    s = sched(budget=16)
    for uid, n in enumerate([10, 9]):
        waiting(s, uid, n)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(0, 0, 10), (1, 0, 6)]),
        "prompts of 10 and 9 tokens with a budget of 16: the first whole, then a 6-token chunk of "
        "the second fills the budget",
        "a prompt longer than what is left of the budget is cut: the request gets what is left, the "
        "rest of its prompt runs in the next steps (chunked prefill)",
    )


def case_long_prompt(fn):
    s = sched(budget=16)
    waiting(s, 0, 40)
    batch = decide(fn, s)
    assert batch is not None, (
        "a 40-token prompt waits, alone, with a budget of 16 tokens, and you returned None: a prompt "
        "longer than the budget must still run, in chunks (chunked prefill), or it waits forever"
    )
    expect(
        batch,
        ("prefill", [(0, 0, 16)]),
        "a 40-token prompt with a budget of 16: its first chunk is 16 tokens",
        "the chunk is min(req.remaining_prompt, budget)",
    )


def case_chunks_continue(fn):
    s = sched(budget=16)
    waiting(s, 0, 40)
    waiting(s, 1, 5)
    steps = [
        ("prefill", [(0, 0, 16)]),
        ("prefill", [(0, 16, 16)]),
        ("prefill", [(0, 32, 8), (1, 0, 5)]),
        ("decode", [(0, 40, 1), (1, 5, 1)]),
    ]
    for n, expected in enumerate(steps, 1):
        batch = decide(fn, s)
        if n > 1 and expected[0] == "prefill":
            holds(
                batch is not None and any(it.req.uid == 0 for it in batch.items),
                f"request 0 is part-way through its prompt ({s.reqs[0].cached_len} of 40 tokens done; it "
                f"holds a page-table row and waits at the head of scheduler.waiting), but your step {n} "
                f"is {show(batch)}: schedule its next chunk first",
                "a request with req.table_idx >= 0 is admitted already: give it its next chunk first, "
                "without admitting it again",
            )
        expect(
            batch,
            expected,
            f"step {n} of a 40-token prompt then a 5-token one, budget 16",
            "a chunk starts where the last one ended, at req.cached_len, and counts against the budget "
            "like any prompt; what is left of the budget goes to the next request",
        )
        apply(s, batch)


def case_does_not_fit(fn):
    s = sched()
    big = decoding(s, 0, 8, max_tokens=900)  # may grow to 908 tokens: 227 of the 256 pages
    late = waiting(s, 1, 40, max_tokens=200)  # needs up to 60 pages
    others, need, available = s.outstanding_pages([big]), s.outstanding_pages([late]), s.cache.num_available
    batch = decide(fn, s)
    not_admitted(
        s,
        late,
        (
            f"its whole run may take {need} pages and the running request may still "
            f"take {others} of the {available} available: it may run out of pages half-way"
        ),
        "admit a request only if every admitted request's remaining worst case, the running ones' too (its "
        "whole run, prompt + max_new_tokens: pages_for(len(req.input_ids) + req.max_new_tokens), the tokens it will generate "
        "included, minus the pages it holds), summed, fits in scheduler.cache.num_available",
    )
    expect(
        batch,
        ("decode", [(0, 8, 1)]),
        "request 1 does not fit yet: nothing can be prefilled, so decode the running request",
        "when no waiting request can run, the step is a decode batch (prefill first does not mean prefill only)",
    )


def case_fifo(fn):
    s = sched()
    decoding(s, 0, 8, max_tokens=900)  # leaves room for 27 more pages
    first = waiting(s, 1, 40, max_tokens=200)  # 60 pages: does not fit
    second = waiting(s, 2, 8, max_tokens=40)  # 12 pages: would fit
    batch = decide(fn, s)
    not_admitted(s, first, "it does not fit")
    holds(
        second.table_idx < 0,
        "request 2 was admitted ahead of request 1, which waits for pages: first come, first served, "
        "or a long request can wait forever behind a stream of short ones",
        "stop at the first waiting request that does not fit, even if a smaller one behind it would",
    )
    expect(batch, ("decode", [(0, 8, 1)]), "request 1 waits for pages and request 2 waits behind it")


def case_cached_pages_available(fn):
    s = sched(cache="radix")
    # 200 pages of earlier requests' prefixes sit in the prefix cache, unused: evictable.
    s.cache.prefix_cache.insert(token_ids(800, 7), s.cache.allocator.allocate(200))
    req = waiting(s, 0, 40, max_tokens=300)  # up to 85 pages: more than the 56 free ones
    batch = decide(fn, s)
    holds(
        batch is not None and req.table_idx >= 0,
        f"nothing runs and request 0 waits, but it fits: {s.cache.num_free} pages are free and "
        f"{s.cache.prefix_cache.num_evictable} more hold cached prefixes no running request uses "
        "(evictable; cache.reserve evicts them when needed)",
        "compare with cache.num_available, which counts free and evictable pages; checking only the free "
        "pages leaves the request waiting forever",
    )
    expect(batch, ("prefill", [(0, 0, 40)]), "request 0 fits once cached pages count")


def case_whole_pool(fn):
    s = sched()
    req = waiting(s, 0, 8, max_tokens=5000)  # clamped to the context: 8 + 1016 tokens = all 256 pages
    need = s.outstanding_pages([req])
    batch = decide(fn, s)
    if (batch is None or req.table_idx < 0) and admits_when_unclamped(fn):
        raise Mistake(
            f"request 0 asks for max_tokens={req.sampling_params.max_tokens}, clamped to req.max_new_tokens="
            f"{req.max_new_tokens} by the context: it may need {need} pages, exactly the {s.cache.num_available} "
            "available, and is kept waiting; with max_tokens already equal to that limit it is admitted",
            "count len(req.input_ids) + req.max_new_tokens (the limit clamped to the context), not "
            "req.sampling_params.max_tokens, what the client asked for",
        )
    holds(
        batch is not None and req.table_idx >= 0,
        f"request 0 may need {need} pages, exactly the {s.cache.num_available} available, and nothing "
        "else runs: it fits and must be admitted. Nothing else will ever free more pages, so it would wait forever",
        "a request whose worst case equals cache.num_available fits: compare with <=, not <",
    )
    expect(batch, ("prefill", [(0, 0, 8)]), "the request that needs the whole pool runs alone")


def case_max_running(fn):
    s = sched(max_running_requests=2)
    for uid in range(4):  # no limit admits all four, a limit one too high three
        waiting(s, uid, 5)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(0, 0, 5), (1, 0, 5)]),
        "scheduler.max_running is 2: only two requests may be admitted at once",
        "count the admitted requests (running, and waiting ones that hold a row) against scheduler.max_running",
    )


# ---------------------------------------------------------------------------- the edges
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
            admitted_now(
                s,
                req,
                f"its prompt starts with 16 tokens cached on 4 pages that running request 0 holds, and "
                f"cache.admit gives them to request 1 too: its run ({final} tokens, {need} pages) needs "
                f"{need - 4} pages more, request 0 may still take 96, and 96 + {need - 4} = 251, exactly "
                "the 251 available",
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
            expect(batch, ("prefill", [(2, 0, 8)]), f"{arrived}: request 2 came first and fits")
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


# More requests than fit at once, over many steps. Requests 0 and 1 reserve 100 pages each and
# request 2, arriving after they have decoded two tokens, the other 56 of the 256: an exact fit
# that holds only if a running request's worst case stays its prompt + max_new_tokens however many
# tokens it has. Requests 3-5 wait for pages, then for one of the max_running = 4 rows, while the
# first ones finish at their first "." (after 10-14 tokens) and their pages go to the prefix cache.


UNIT_CASES = [
    Case("nothing to run", case_nothing, "contract: when there is nothing to do"),
    Case("prefill before decode", case_prefill_first, "contract: prefill first"),
    Case("decode batch", case_decode, "contract: the decode batch"),
    Case("several prompts in one batch", case_several_prompts, "contract: the prefill batch and its budget"),
    Case("token budget", case_budget, "contract: the prefill batch and its budget"),
    Case("long prompt is chunked", case_long_prompt, "contract: the prefill batch and its budget (chunks)"),
    Case(
        "chunks continue where the last ended", case_chunks_continue, "contract: a request part-way through its prompt"
    ),
    Case("a request that does not fit waits", case_does_not_fit, "contract: admission, the whole run"),
    Case("first come, first served", case_fifo, "contract: admission, nobody overtakes"),
    Case("cached pages count as available", case_cached_pages_available, "contract: admission, what is available"),
    Case("a request that needs the whole pool", case_whole_pool, "contract: admission, an exact fit"),
    Case("running-request limit", case_max_running, "contract: admission, scheduler.max_running"),
    Case("budget: exact fit and one-token margins", case_budget_margins, "contract: the prefill batch and its budget"),
    Case("chunks and page boundaries", case_page_boundaries, "contract: the pages a batch's requests hold"),
    Case("memory: exact fit and one page short", case_memory_margins, "contract: admission, the whole run in pages"),
    Case(
        "a cached prefix held by running requests, memory tight",
        case_shared_prefix_tight,
        "contract: admission with a cached prefix, and what is available",
    ),
    Case("the same requests in both arrival orders", case_both_orders, "contract: first come, first served"),
]
CASES = UNIT_CASES + engine_cases(UNIT_CASES) + [schedule_case(reference)]
SYMBOL = "schedule_next_batch"
SOLUTION = reference
