"""Exercise 5 — scheduling: `schedule_next_batch(scheduler) -> Batch | None`.

The scheduler calls it once per step (`Scheduler.schedule_fn`, from `_schedule_next_batch`) to
decide which tokens the engine computes next. The unit cases build a scheduler's state by hand
(requests waiting, part-way through a chunked prefill, decoding, pages held by others) and look
at the one decision; no model runs for them. Several play the edges of the contract (edges.py):
budgets and memory that fit exactly or miss by one token or one page, with lengths that are not
multiples of the page size; chunks that end on a page boundary or one token past it; a prefix
cached on pages that running requests hold, or that no request holds, while memory is tight; a
request part-way through its chunked prefill beside a new one; the same requests in both arrival
orders. The
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
from minisgl_edu.grading.fixtures import FAKE_TOKEN, apply, decoding, token_ids, waiting
from minisgl_edu.grading.schedule.budget_slots import check_budget_in_page_slots
from minisgl_edu.grading.schedule.checks import (
    admits,
    admits_when_unclamped,
    decide,
    expect,
    items_of,
    not_admitted,
    sched,
    show,
    show_expected,
)
from minisgl_edu.grading.schedule.edges import (
    admits_beside_a_chunked_head,
    case_beside_a_chunked_head,
    case_both_orders,
    case_budget_margins,
    case_memory_margins,
    case_page_boundaries,
    case_shared_prefix_tight,
    case_unlocked_prefix_tight,
)
from minisgl_edu.grading.schedule.engine import engine_cases
from minisgl_edu.grading.schedule.items_kept import check_items_kept, items_seen
from minisgl_edu.grading.schedule.limit_first import check_limit_before_admit
from minisgl_edu.grading.schedule.limit_one_early import ONE_EARLY, ONE_EARLY_HINT, refuses_one_early
from minisgl_edu.grading.schedule.need_clamped import never_refuses_for_pages, probe_message, which_hint
from minisgl_edu.grading.schedule.newcomer_left_out import NEWCOMER_LEFT_OUT, leaves_out_the_newcomer, newcomer_message
from minisgl_edu.grading.schedule.page_rounding import ONE_PAGE_TOO_MANY, full_last_page_message
from minisgl_edu.grading.schedule.pages_swapped import PAGES_FOR_SWAPPED, swapped_message, swaps_pages_for
from minisgl_edu.grading.schedule.row_zero import ROW_ZERO, ROW_ZERO_HINT, misses_row_zero
from minisgl_edu.grading.schedule.scenes import schedule_case
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
    running = decoding(s, 0, 12)  # 13 tokens: its next decode step needs a 4th page
    held = s.cache.held_pages(running)
    waiting(s, 1, 9)
    batch = decide(fn, s)
    expect(
        batch,
        ("prefill", [(1, 0, 9)]),
        "request 1 waits while request 0 decodes: prefill comes first, so a new request gets its "
        "first token without waiting for the others to finish",
        "look at scheduler.waiting before scheduler.running: a decode batch only when no prompt token can run",
    )
    now = s.cache.held_pages(running)
    holds(
        now == held,
        f"request 0 (running, {running.total_len} tokens in {held} pages) is not in your prefill batch, yet it "
        f"holds {now} pages after your decision: pages were reserved for a request this step does not run",
        "reserve pages only for the items of the batch you return: decide first whether this step is a prefill "
        "or a decode step; a prefill step reserves for its prefill items only, a decode step reserves "
        "req.total_len for each running request",
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
    # Request 0 finishes and its page-table row 0 goes to request 2, admitted later: scheduler.running
    # is [1, 2] while the rows are [1, 0], so running order and row order part.
    s = sched()
    first, _ = decoding(s, 0, 6), decoding(s, 1, 5)
    s.running.remove(first)  # request 0 finishes, as the scheduler's _finish does it
    s.cache.release(first, cache_it=True)
    del s.reqs[0]
    assert decoding(s, 2, 7).table_idx == 0, "setup: request 2 takes the row request 0 gave back"
    batch = decide(fn, s)
    by_row = items_of(batch) == ("decode", [(2, 7, 1), (1, 5, 1)])
    expect(
        batch,
        ("decode", [(1, 5, 1), (2, 7, 1)]),
        "request 0 finished and gave back page-table row 0; request 2, admitted after request 1 (row 1), took it: "
        "scheduler.running is [request 1, request 2], on rows 1 and 0",
        "decode the running requests in scheduler.running's order, not by page-table row (req.table_idx): rows are "
        "given back when a request finishes and handed out again, so a request admitted later can hold a lower row"
        if by_row
        else "",
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
    check_budget_in_page_slots(
        fn, batch, ("prefill", [(0, 0, 10), (1, 0, 6)]), "prompts of 10, 6 and 5 tokens, budget 16"
    )
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
    prev = seen = None
    for n, expected in enumerate(steps, 1):
        batch = decide(fn, s)
        check_items_kept(prev, seen, batch, n - 1)  # the last batch may still be in flight
        prev, seen = batch, items_seen(batch)
        if n > 1 and expected[0] == "prefill":
            holds(
                batch is not None and any(it.req.uid == 0 for it in batch.items),
                f"request 0 is part-way through its prompt ({s.reqs[0].cached_len} of 40 tokens done; it "
                f"holds a page-table row and waits at the head of scheduler.waiting), but your step {n} "
                f"is {show(batch)}: schedule its next chunk first",
                "a request with req.table_idx >= 0 is admitted already: give it its next chunk first, "
                "without admitting it again",
            )
        _computed_tokens_charged(fn, s, batch, expected)
        expect(
            batch,
            expected,
            f"step {n} of a 40-token prompt then a 5-token one, budget 16",
            "a chunk starts where the last one ended, at req.cached_len, and counts against the budget "
            "like any prompt; what is left of the budget goes to the next request",
        )
        apply(s, batch)


def _computed_tokens_charged(fn, s, batch, expected: tuple) -> None:
    """A prefill batch that stops early, budget left, after an item that starts past position 0:
    raise the mistake of charging the budget for tokens computed before the chunk (earlier chunks,
    a cached prefix), when that is what happened. The answer's items are the first of those
    expected, the next expected request is left out, and the answer fills the budget when every
    prompt starts at 0 (the control: prompts of 8 and 5 tokens, budget 16, take 13)."""
    phase, want = expected
    got = [(it.req.uid, it.start, it.num_tokens) for it in batch.items] if batch is not None else []
    if phase != "prefill" or not batch.is_prefill or not 0 < len(got) < len(want) or got != want[: len(got)]:
        return
    late = [it for it in batch.items if it.start > 0]
    if not late or batch.num_tokens >= s.max_prefill_tokens:
        return
    control = sched(budget=16)
    for uid, n in enumerate([8, 5]):
        waiting(control, uid, n)
    try:
        kept = decide(fn, control)
    except Exception:
        return
    if items_of(kept) != ("prefill", [(0, 0, 8), (1, 0, 5)]):
        return
    first, left = late[0], s.max_prefill_tokens - batch.num_tokens
    raise Mistake(
        f"your prefill batch computes {batch.num_tokens} of the {s.max_prefill_tokens} tokens of the budget and "
        f"stops with {left} left while request {want[len(got)][0]} waits: request {first.req.uid}'s chunk "
        f"computes {first.num_tokens} tokens from position {first.start}, and the {first.start} tokens before it "
        "(computed at earlier steps) were taken off the budget too (prompts of 8 and 5 tokens with a budget of "
        "16, nothing computed before, fit together in your answer)",
        "only the tokens a batch computes count against scheduler.max_prefill_tokens: take each item's chunk "
        "(its num_tokens) off the budget, not the prefix already computed before it (req.cached_len: earlier "
        "chunks or a cached prefix)",
    )


def case_does_not_fit(fn):
    s = sched()
    big = decoding(s, 0, 8, max_tokens=900)  # may grow to 908 tokens: 227 of the 256 pages
    late = waiting(s, 1, 40, max_tokens=200)  # needs up to 60 pages
    others, need, available = s.outstanding_pages([big]), s.outstanding_pages([late]), s.cache.num_available
    batch = decide(fn, s)
    why = (
        f"its whole run may take {need} pages and the running request may still "
        f"take {others} of the {available} available: it may run out of pages half-way"
    )
    if late.table_idx >= 0 and swaps_pages_for(fn):  # confirmed on scenes of its own
        raise Mistake(f"request 1 was admitted, but {why}{swapped_message()}", PAGES_FOR_SWAPPED)
    if late.table_idx >= 0 and never_refuses_for_pages(fn):  # confirmed on a scene of its own
        raise Mistake(f"request 1 was admitted, but {why}{probe_message()}", which_hint(fn))
    if late.table_idx >= 0 and leaves_out_the_newcomer(fn):
        raise Mistake(f"request 1 was admitted, but {why}{newcomer_message()}", NEWCOMER_LEFT_OUT)
    not_admitted(
        s,
        late,
        why,
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
    if (batch is None or req.table_idx < 0) and _counts_the_newcomer_twice(fn):
        raise Mistake(
            f"request 0 may need {need} pages, exactly the {s.cache.num_available} available, and is kept "
            "waiting. Alone, your function admits a request that needs half the pool but not one that needs "
            "half and one page: it counts the new request's pages twice. After cache.admit(req) the new "
            "request holds a row, so it is already among the waiting requests with a row, and you add it again",
            "count every request once: list the admitted requests (running, and waiting with a row) before "
            "cache.admit(req), or do not add req to a list built after it",
        )
    full_page = full_last_page_message(fn) if batch is None or req.table_idx < 0 else ""
    holds(
        batch is not None and req.table_idx >= 0,
        f"request 0 may need {need} pages, exactly the {s.cache.num_available} available, and nothing "
        "else runs: it fits and must be admitted. Nothing else will ever free more pages, so it would wait "
        f"forever.{full_page}",
        ONE_PAGE_TOO_MANY
        if full_page
        else "a request whose worst case equals cache.num_available fits: compare with <=, not <",
    )
    expect(batch, ("prefill", [(0, 0, 8)]), "the request that needs the whole pool runs alone")


def case_max_running(fn):
    s = sched(max_running_requests=2)
    for uid in range(4):  # no limit admits all four, a limit one too high three
        waiting(s, uid, 5)
    try:
        batch = decide(fn, s)
    except Mistake as m:
        if len(s.cache.page_table.used_rows()) > s.max_running and _refuses_when_full(fn):
            # It knows the limit. Counting scheduler.running only also lets a request in beside one
            # that waits with a row from an earlier step; a count of all rows taken once does not.
            if misses_row_zero(fn):  # the request on row 0 is not counted: the first one admitted here
                raise Mistake(f"{m} {ROW_ZERO}", ROW_ZERO_HINT) from None
            if admits_beside_a_chunked_head(fn):
                raise Mistake(f"{m} {RUNNING_ONLY}", RUNNING_ONLY_HINT) from None
            raise Mistake(
                str(m),
                "count the free places again after each admission: max_running minus the admitted requests, "
                "counted once before the loop, does not see the requests this step has admitted since",
            ) from None
        raise
    what = "scheduler.max_running is 2: only two requests may be admitted at once"
    two = ("prefill", [(0, 0, 5), (1, 0, 5)])
    if items_of(batch) == ("prefill", [(0, 0, 5)]) and refuses_one_early(fn):  # one request fewer than the limit
        raise Mistake(f"{what}: expected {show_expected(two)}, got {show(batch)} {ONE_EARLY}", ONE_EARLY_HINT)
    expect(
        batch,
        two,
        what,
        "count the admitted requests (running, and waiting ones that hold a row) against scheduler.max_running",
    )
    check_limit_before_admit(fn)  # every row taken, as in the engine: no admission past the limit


RUNNING_ONLY = (
    "(your function counts scheduler.running only: it refuses a request while 2 requests run, but with one "
    "running and one waiting with a row, part-way through its prompt, it admits a third; the requests it admits "
    "in this step are not running yet either)"
)
RUNNING_ONLY_HINT = (
    "every admitted request counts against scheduler.max_running, running or waiting with a row (admitted at an "
    "earlier step or in this one): count them all, not only len(scheduler.running)"
)


def _counts_the_newcomer_twice(fn) -> bool:
    """Whether `fn`, with nothing else admitted, admits a request that needs exactly half the pool but
    refuses one that needs one page more: the threshold of an answer that counts the new request
    twice (a strict comparison or any other count admits both or refuses both)."""

    def alone(extra_pages: int) -> bool:
        s = sched()
        tokens = (s.cache.num_available // 2 + extra_pages) * s.cache.page_size
        return admits(fn, s, waiting(s, 0, 8, max_tokens=tokens - 8))

    return alone(0) and not alone(1)


def _refuses_when_full(fn) -> bool:
    """Whether `fn` refuses a new request while max_running requests already run: then it knows the
    limit, and admitting too many in one step means it does not count the requests it admits."""
    s = sched(max_running_requests=2)
    decoding(s, 0, 5)
    decoding(s, 1, 5)
    return not admits(fn, s, waiting(s, 2, 5))


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
    Case(
        "a cached prefix no request holds, memory tight",
        case_unlocked_prefix_tight,
        "contract: admission with a cached prefix, and what is available",
    ),
    Case(
        "a request part-way through its prompt beside a new one",
        case_beside_a_chunked_head,
        "contract: admission, every admitted request (running, and waiting with a row)",
    ),
]
CASES = UNIT_CASES + engine_cases(UNIT_CASES) + [schedule_case(reference)]
SYMBOL = "schedule_next_batch"
SOLUTION = reference
