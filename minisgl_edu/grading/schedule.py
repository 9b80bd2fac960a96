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

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, SamplingParams, ScheduledReq
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import collect, new_scheduler, remember, require_passing
from minisgl_edu.kvcache import OutOfPages, pages_for
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as reference

FAKE_TOKEN = 100  # what a hand-made "forward pass" samples: the unit cases never run the model


def _ids(n: int, seed: int) -> list[int]:
    """n token ids of the default model's vocabulary, different for each seed."""
    return [(seed * 7919 + i * 104729) % 49000 + 100 for i in range(n)]


def _sched(budget: int = 64, cache: str = "naive", **overrides) -> Scheduler:
    return new_scheduler(max_prefill_tokens=budget, cache=cache, **overrides)


def _waiting(s: Scheduler, uid: int, n: int, max_tokens: int = 8, ids: Optional[list[int]] = None) -> Req:
    ids = _ids(n, uid) if ids is None else ids
    req = s.add_request(uid, ids, SamplingParams(max_tokens=max_tokens, ignore_eos=True))
    assert req is not None, f"setup: request {uid} was rejected"
    return req


def _running(s: Scheduler, uid: int, n: int, max_tokens: int = 8, ids: Optional[list[int]] = None) -> Req:
    """A request whose prompt is done and which has sampled one token, as after its prefill."""
    req = _waiting(s, uid, n, max_tokens, ids)
    s.waiting.remove(req)
    s.cache.admit(req)
    s.cache.reserve(req, n)
    req.cached_len = n
    req.output_ids.append(FAKE_TOKEN)
    req.status = ReqStatus.DECODING
    s.running.append(req)
    return req


def _apply(s: Scheduler, batch: Batch) -> None:
    """What the engine and `_process_results` would do with `batch`, without running the model."""
    for it in batch.items:
        req = it.req
        req.cached_len = max(req.cached_len, it.end)
        if it.end < req.total_len:
            continue  # a chunk of a prompt: no token yet
        if batch.is_prefill:
            s.waiting.remove(req)
            s.running.append(req)
            req.status = ReqStatus.DECODING
        req.output_ids.append(FAKE_TOKEN)


def _admitted(s: Scheduler) -> list[Req]:
    return s.running + [r for r in s.waiting if r.table_idx >= 0]


def _outstanding(s: Scheduler, reqs: list[Req]) -> int:
    total = 0
    for r in reqs:
        final = len(r.input_ids) + r.max_new_tokens
        total += max(pages_for(final, s.cache.page_size) - s.cache.held_pages(r), 0)
    return total


def _show(batch: Optional[Batch]) -> str:
    if batch is None:
        return "no batch (None)"
    items = ", ".join(f"uid {it.req.uid}: {it.num_tokens} tok from {it.start}" for it in batch.items)
    return f"a {batch.phase} batch [{items}]"


def _items(batch: Optional[Batch]) -> Optional[tuple]:
    if batch is None:
        return None
    return batch.phase, [(it.req.uid, it.start, it.num_tokens) for it in batch.items]


ENGINE_ANSWER = ("_schedule_prefill", "_schedule_decode", "_try_admit", "_outstanding_pages", "_admitted")


def _hide_engine_answer(s: Scheduler) -> None:
    """The scheduler's own methods that make up the answer raise when the student's code calls them."""

    def hidden(name):
        def call(*args, **kwargs):
            raise AssertionError(
                f"your code called scheduler.{name}(), the engine's own scheduling code: write the "
                "decision yourself (scheduler.cache and pages_for are yours to use)"
            )

        return call

    for name in ENGINE_ANSWER:
        setattr(s, name, hidden(name))


def decide(fn, s: Scheduler) -> Optional[Batch]:
    """Call the student's function once and check that its batch is one the engine can run."""
    if fn is not reference:
        _hide_engine_answer(s)
    try:
        batch = fn(s)
    except NotImplementedError:
        raise
    except OutOfPages as e:
        raise AssertionError(
            f"your code asked for KV pages that were not there ({e}): a request was admitted whose "
            "whole run (prompt + max_new_tokens) did not fit in cache.num_available"
        ) from None
    except RuntimeError as e:
        if "no free page-table row" not in str(e):
            raise
        raise AssertionError(
            "your code ran out of page-table rows: at most scheduler.max_running requests (running, "
            "plus waiting ones that hold a row) may be admitted at once"
        ) from None
    _check_batch(s, batch)
    _check_rows(s, batch)
    try:
        s.cache.check()
    except AssertionError as e:
        raise AssertionError(f"after your decision the KV pages do not add up: {e}") from None
    return batch


def _check_batch(s: Scheduler, batch) -> None:
    if batch is None:
        return
    assert isinstance(batch, Batch), f"return a Batch or None, not {type(batch).__name__}"
    assert batch.phase in ("prefill", "decode"), f"a batch's phase is 'prefill' or 'decode', not {batch.phase!r}"
    assert batch.items, (
        f"you returned a {batch.phase} Batch with no items: when nothing can run, return None (an empty "
        "batch means a step that computes nothing, and the next step would decide the same)"
    )
    seen = set()
    for it in batch.items:
        assert isinstance(it, ScheduledReq), "a batch's items are ScheduledReq(req, start, num_tokens)"
        req = it.req
        assert req.uid not in seen, f"request {req.uid} is twice in the batch"
        seen.add(req.uid)
        assert it.num_tokens >= 1, (
            f"request {req.uid} is in the batch with {it.num_tokens} tokens to compute: stop adding "
            "requests once the token budget is used up (a batch item computes at least one token)"
        )
        assert req.table_idx >= 0, (
            f"request {req.uid} is in the batch but was never admitted (it has no page-table row): admit it first"
        )
        if batch.is_prefill:
            assert req in s.waiting, f"request {req.uid} is in a prefill batch but not in scheduler.waiting"
            assert it.start == req.cached_len, (
                f"request {req.uid} has {req.cached_len} of its {len(req.input_ids)} prompt tokens in the "
                f"cache already (req.cached_len), but your chunk starts at {it.start}: the next chunk "
                "starts where the last one ended. Hint: an item's start is req.cached_len (cache.admit sets it "
                "to the cached prefix's length; the engine moves it on after each chunk)"
            )
            assert it.end <= len(req.input_ids), (
                f"request {req.uid}: your prefill item reaches position {it.end}, past the end of its "
                f"{len(req.input_ids)}-token prompt (its remaining prompt is req.remaining_prompt)"
            )
        else:
            assert req in s.running, f"request {req.uid} is in a decode batch but not in scheduler.running"
            assert (it.start, it.num_tokens) == (req.total_len - 1, 1), (
                f"request {req.uid}: a decode item computes one token, the newest, at position "
                f"req.total_len - 1 = {req.total_len - 1}; yours computes {it.num_tokens} from {it.start}"
            )
        held, needed = s.cache.held_pages(req), pages_for(it.end, s.cache.page_size)
        assert held >= needed, (
            f"request {req.uid} computes tokens up to position {it.end} but holds only {held} pages "
            f"(it needs {needed} of {s.cache.page_size} tokens). Hint: before you add an item, "
            f"scheduler.cache.reserve(req, {it.end}) makes the request hold pages up to the item's end"
        )
        assert held == needed, (
            f"request {req.uid} computes tokens up to position {it.end}, which take {needed} pages of "
            f"{s.cache.page_size} tokens, but it holds {held}: a page taken before it is needed is one "
            "that the admission of the others counted as available, so they can run out of pages. "
            "Hint: reserve up to the item's end, scheduler.cache.reserve(req, start + num_tokens); "
            "pages belong to the request, not to a chunk (a chunk that starts inside a page continues on it)"
        )
    if batch.is_prefill:
        assert batch.num_tokens <= s.max_prefill_tokens, (
            f"your prefill batch computes {batch.num_tokens} prompt tokens, but the token budget "
            f"(scheduler.max_prefill_tokens) is {s.max_prefill_tokens}. Hint: a request gets what is left "
            "of the budget, min(req.remaining_prompt, budget left); the rest of its prompt runs in the next steps"
        )
    else:
        missing = [r.uid for r in s.running if r.uid not in seen]
        assert not missing, (
            f"the decode batch leaves out running request(s) {missing}. Hint: a decode batch has one "
            "item for every request in scheduler.running, in that order"
        )


def _check_rows(s: Scheduler, batch: Optional[Batch]) -> None:
    admitted = _admitted(s)
    used = len(s.cache.page_table.used_rows())
    assert used == len({r.table_idx for r in admitted}), (
        f"{used} page-table rows are in use but only {len(admitted)} request(s) hold one: a row was "
        "taken and then lost (a request admitted twice? one part-way through its prompt already has "
        "its row, req.table_idx >= 0)"
    )
    assert used <= s.max_running, (
        f"{used} requests hold a page-table row, but at most scheduler.max_running = {s.max_running} "
        "may be admitted at once"
    )
    in_batch = {it.req.uid for it in batch.items} if batch is not None else set()
    for r in s.waiting:
        if r.table_idx >= 0 and r.uid not in in_batch and r.cached_len > r.prefix_len:
            raise AssertionError(
                f"request {r.uid} is part-way through its prompt ({r.cached_len} of {len(r.input_ids)} "
                "tokens in the cache; it holds a page-table row and waits at the head of "
                "scheduler.waiting) but is not in the batch: schedule its next chunk first, without "
                "admitting it again"
            )
        if r.table_idx >= 0 and r.uid not in in_batch:
            raise AssertionError(
                f"request {r.uid} holds a page-table row but is not in the batch: a request that does "
                "not fit must be left as it was (undo its admission with "
                "scheduler.cache.release(req, cache_it=False))"
            )


def _expect(batch, expected: tuple, what: str, hint: str = "") -> None:
    """`batch` must be `expected`; `hint` is shown with the failure (the help for this assertion)."""
    assert _items(batch) == expected, f"{what}: expected {_show_expected(expected)}, got {_show(batch)}" + (
        f". Hint: {hint}" if hint else ""
    )


def _show_expected(expected) -> str:
    phase, items = expected
    return f"a {phase} batch [" + ", ".join(f"uid {u}: {n} tok from {st}" for u, st, n in items) + "]"


def _not_admitted(s: Scheduler, req: Req, why: str) -> None:
    assert req in s.waiting, (
        f"request {req.uid} is no longer in scheduler.waiting: a request that does not fit yet keeps "
        "waiting (it fits once others finish); add_request has already rejected every prompt that could "
        "never fit"
    )
    assert req.table_idx < 0, f"request {req.uid} was admitted, but {why}"


def _admitted_now(s: Scheduler, req: Req, why: str) -> None:
    assert req.table_idx >= 0, f"request {req.uid} was not admitted, but {why}"


# ---------------------------------------------------------------------------- unit cases
def case_nothing(fn):
    s = _sched()
    batch = decide(fn, s)
    assert batch is None, (
        f"nothing waits and nothing runs: return None, not {_show(batch)}. Hint: None is how the loop "
        "learns that there is nothing to do (it then waits for a message)"
    )


def case_prefill_first(fn):
    s = _sched()
    _running(s, 0, 12)
    _waiting(s, 1, 9)
    batch = decide(fn, s)
    _expect(
        batch,
        ("prefill", [(1, 0, 9)]),
        "request 1 waits while request 0 decodes: prefill comes first, so a new request gets its "
        "first token without waiting for the others to finish",
        "look at scheduler.waiting before scheduler.running: a decode batch only when no prompt token can run",
    )


def case_decode(fn):
    s = _sched()
    _running(s, 0, 12).output_ids += [FAKE_TOKEN] * 3  # 12 + 4 tokens: the newest at position 15
    _running(s, 1, 5)
    batch = decide(fn, s)
    _expect(
        batch,
        ("decode", [(0, 15, 1), (1, 5, 1)]),
        "nobody waits: decode every running request, in scheduler.running order, one token each",
        "a decode item computes the newest token, the one at position req.total_len - 1: "
        "ScheduledReq(req, req.total_len - 1, 1)",
    )


def case_several_prompts(fn):
    s = _sched(budget=64)
    for uid, n in enumerate([5, 7, 6]):
        _waiting(s, uid, n)
    batch = decide(fn, s)
    _expect(
        batch,
        ("prefill", [(0, 0, 5), (1, 0, 7), (2, 0, 6)]),
        "three short prompts (18 tokens) wait and the budget is 64: prefill them together, in order",
        "one prefill batch takes waiting requests in queue order as long as the budget lasts, not one request a step",
    )


def case_budget(fn):
    s = _sched(budget=16)
    for uid, n in enumerate([10, 6, 5]):
        _waiting(s, uid, n)
    batch = decide(fn, s)
    _expect(
        batch,
        ("prefill", [(0, 0, 10), (1, 0, 6)]),
        "prompts of 10, 6 and 5 tokens with a budget of 16: the first two use it up exactly",
        "each request takes min(req.remaining_prompt, what is left of the budget); once nothing is "
        "left, stop (no item of 0 tokens)",
    )
    assert s.reqs[2].table_idx < 0, (
        "request 2 is not in the batch, so it must not be admitted (no row, no pages). Hint: stop "
        "before admitting anyone once the budget is used up"
    )
    s = _sched(budget=16)
    for uid, n in enumerate([10, 9]):
        _waiting(s, uid, n)
    batch = decide(fn, s)
    _expect(
        batch,
        ("prefill", [(0, 0, 10), (1, 0, 6)]),
        "prompts of 10 and 9 tokens with a budget of 16: the first whole, then a 6-token chunk of "
        "the second fills the budget",
        "a prompt longer than what is left of the budget is cut: the request gets what is left, the "
        "rest of its prompt runs in the next steps (chunked prefill)",
    )


def case_long_prompt(fn):
    s = _sched(budget=16)
    _waiting(s, 0, 40)
    batch = decide(fn, s)
    assert batch is not None, (
        "a 40-token prompt waits, alone, with a budget of 16 tokens, and you returned None: a prompt "
        "longer than the budget must still run, in chunks (chunked prefill), or it waits forever"
    )
    _expect(
        batch,
        ("prefill", [(0, 0, 16)]),
        "a 40-token prompt with a budget of 16: its first chunk is 16 tokens",
        "the chunk is min(req.remaining_prompt, budget)",
    )


def case_chunks_continue(fn):
    s = _sched(budget=16)
    _waiting(s, 0, 40)
    _waiting(s, 1, 5)
    steps = [
        ("prefill", [(0, 0, 16)]),
        ("prefill", [(0, 16, 16)]),
        ("prefill", [(0, 32, 8), (1, 0, 5)]),
        ("decode", [(0, 40, 1), (1, 5, 1)]),
    ]
    for n, expected in enumerate(steps, 1):
        batch = decide(fn, s)
        if n > 1 and expected[0] == "prefill":
            assert batch is not None and any(it.req.uid == 0 for it in batch.items), (
                f"request 0 is part-way through its prompt ({s.reqs[0].cached_len} of 40 tokens done; it "
                f"holds a page-table row and waits at the head of scheduler.waiting), but your step {n} "
                f"is {_show(batch)}: schedule its next chunk first, without admitting it again. Hint: a "
                "request with req.table_idx >= 0 is admitted already"
            )
        _expect(
            batch,
            expected,
            f"step {n} of a 40-token prompt then a 5-token one, budget 16",
            "a chunk starts where the last one ended, at req.cached_len, and counts against the budget "
            "like any prompt; what is left of the budget goes to the next request",
        )
        _apply(s, batch)


def case_does_not_fit(fn):
    s = _sched()
    big = _running(s, 0, 8, max_tokens=900)  # may grow to 908 tokens: 227 of the 256 pages
    waiting = _waiting(s, 1, 40, max_tokens=200)  # needs up to 60 pages
    others, need, available = _outstanding(s, [big]), _outstanding(s, [waiting]), s.cache.num_available
    batch = decide(fn, s)
    _not_admitted(
        s,
        waiting,
        (
            f"its whole run may take {need} pages and the running request may still "
            f"take {others} of the {available} available. Hint: admit a request only if every "
            "admitted request's remaining worst case (pages_for(prompt + max_new_tokens) minus the pages "
            "it holds), summed, fits in scheduler.cache.num_available, or it may run out of pages half-way"
        ),
    )
    _expect(
        batch,
        ("decode", [(0, 8, 1)]),
        "request 1 does not fit yet: nothing can be prefilled, so decode the running request",
        "when no waiting request can run, the step is a decode batch (prefill first does not mean prefill only)",
    )


def case_fifo(fn):
    s = _sched()
    _running(s, 0, 8, max_tokens=900)  # leaves room for 27 more pages
    first = _waiting(s, 1, 40, max_tokens=200)  # 60 pages: does not fit
    second = _waiting(s, 2, 8, max_tokens=40)  # 12 pages: would fit
    batch = decide(fn, s)
    _not_admitted(s, first, "it does not fit")
    assert second.table_idx < 0, (
        "request 2 was admitted ahead of request 1, which waits for pages: first come, first served, "
        "or a long request can wait forever behind a stream of short ones. Hint: stop at the first "
        "waiting request that does not fit, even if a smaller one behind it would"
    )
    _expect(batch, ("decode", [(0, 8, 1)]), "request 1 waits for pages and request 2 waits behind it")


def case_cached_pages_available(fn):
    s = _sched(cache="radix")
    # 200 pages of earlier requests' prefixes sit in the prefix cache, unused: evictable.
    s.cache.prefix_cache.insert(_ids(800, 7), s.cache.allocator.allocate(200))
    req = _waiting(s, 0, 40, max_tokens=300)  # up to 85 pages: more than the 56 free ones
    batch = decide(fn, s)
    assert batch is not None and req.table_idx >= 0, (
        f"nothing runs and request 0 waits, but it fits: {s.cache.num_free} pages are free and "
        f"{s.cache.prefix_cache.num_evictable} more hold cached prefixes no running request uses "
        "(evictable; cache.reserve evicts them when needed). Hint: compare with cache.num_available, "
        "which counts both; checking only the free pages leaves the request waiting forever"
    )
    _expect(batch, ("prefill", [(0, 0, 40)]), "request 0 fits once cached pages count")


def case_whole_pool(fn):
    s = _sched()
    req = _waiting(s, 0, 8, max_tokens=5000)  # clamped to the context: 8 + 1016 tokens = all 256 pages
    need = _outstanding(s, [req])
    batch = decide(fn, s)
    assert batch is not None and req.table_idx >= 0, (
        f"request 0 may need {need} pages, exactly the {s.cache.num_available} available, and nothing "
        "else runs: it fits and must be admitted (a request fits when its worst case is <= "
        "num_available). Nothing else will ever free more pages, so it would wait forever"
    )
    _expect(batch, ("prefill", [(0, 0, 8)]), "the request that needs the whole pool runs alone")


def case_max_running(fn):
    s = _sched(max_running_requests=2)
    for uid in range(3):
        _waiting(s, uid, 5)
    batch = decide(fn, s)
    _expect(
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
        s = _sched(budget=budget)
        for uid, n in enumerate(lengths):
            _waiting(s, uid, n)
        batch = decide(fn, s)
        _expect(batch, ("prefill", expected), f"budget {budget}, prompts of {lengths} tokens: {what}", hint)


def case_page_boundaries(fn):
    # One 13-token prompt (pages of 4), max_tokens 2: its whole run is 15 tokens, 4 pages.
    plays = {
        6: [(0, 6), (6, 6), (12, 1)],  # chunks end inside pages: 2, 3, 4 pages
        8: [(0, 8), (8, 5)],  # the first chunk ends exactly at a page boundary: 2 pages, then 4
        9: [(0, 9), (9, 4)],  # one token past it: 3 pages, then 4
    }
    for budget, chunks in plays.items():
        s = _sched(budget=budget)
        req = _waiting(s, 0, 13, max_tokens=2)
        for n, (start, num) in enumerate(chunks, 1):
            batch = decide(fn, s)  # checks that it holds exactly pages_for(start + num) pages
            _expect(
                batch,
                ("prefill", [(0, start, num)]),
                f"a 13-token prompt with a budget of {budget}, step {n}",
                "each step continues the prompt at req.cached_len with min(req.remaining_prompt, budget) tokens",
            )
            _apply(s, batch)
        batch = decide(fn, s)
        _expect(batch, ("decode", [(0, 13, 1)]), f"a 13-token prompt with a budget of {budget}, after its prompt")
        held = s.cache.held_pages(req)
        assert held == 4, (
            f"after its prompt and one decode step, request 0 (15 tokens at most) holds {held} pages, not "
            "pages_for(14, 4) = 4. Hint: reserve up to each item's end, never a page count per chunk"
        )


def case_memory_margins(fn):
    # Lengths that are not multiples of the page size (4): 513 tokens take 129 pages, 505 take 127,
    # 509 take 128. Request 0 runs (9-token prompt, 3 pages held); 253 of 256 pages are available.
    for max_tokens, final, fits in [(499, 505, True), (503, 509, False)]:
        s = _sched()
        running = _running(s, 0, 9, max_tokens=504)
        req = _waiting(s, 1, 6, max_tokens=max_tokens)
        assert s.cache.num_available == 253 and _outstanding(s, [running]) == 126, "setup: the pages changed"
        need = pages_for(final, s.cache.page_size)
        batch = decide(fn, s)
        if fits:
            _admitted_now(
                s,
                req,
                f"its run (6 + {max_tokens} = {final} tokens) takes {need} pages and request 0 (513 tokens, "
                "129 pages, 3 held) may still take 126: 253, exactly the 253 available, so it fits. Hint: "
                "a request fits when the sum is <= cache.num_available",
            )
            _expect(batch, ("prefill", [(1, 0, 6)]), "request 1 fits exactly")
        else:
            _not_admitted(
                s,
                req,
                f"its run (6 + {max_tokens} = {final} tokens) takes {need} pages and request 0 (513 tokens, "
                "129 pages, 3 held) may still take 126: 254, one page more than the 253 available. Hint: "
                "count whole pages per request, rounded up, pages_for(len(prompt) + max_new_tokens, "
                "page_size): each request's last page is partly empty and no other request can use it. A "
                "sum of tokens converted into pages once, or a division rounded down, counts too few",
            )
            _expect(batch, ("decode", [(0, 9, 1)]), "request 1 is one page short: decode the running request")


PREFIX = _ids(16, 50)  # 16 tokens, 4 pages of the prefix cache


def case_shared_prefix_tight(fn):
    # The 16-token PREFIX is cached on 4 pages that running request 0 holds (locked, so neither
    # free nor evictable); 10 more cached pages no one uses are evictable. Request 1's prompt
    # starts with PREFIX: cache.admit gives it those 4 pages. 251 pages are available.
    for max_tokens, final, fits in [(615, 636, True), (619, 640, False)]:
        s = _sched(cache="radix")
        s.cache.prefix_cache.insert(PREFIX, s.cache.allocator.allocate(4))
        s.cache.prefix_cache.insert(_ids(40, 60), s.cache.allocator.allocate(10))
        running = _running(s, 0, 19, max_tokens=382, ids=PREFIX + _ids(3, 70))  # 401 tokens: 101 pages
        req = _waiting(s, 1, 21, max_tokens=max_tokens, ids=PREFIX + _ids(5, 80))
        assert (running.prefix_len, s.cache.held_pages(running)) == (16, 5), "setup: no prefix hit"
        assert s.cache.num_available == 251 and s.cache.prefix_cache.num_cached == 14, "setup: the pages changed"
        need = pages_for(final, s.cache.page_size)
        batch = decide(fn, s)
        if fits:
            _admitted_now(
                s,
                req,
                f"its prompt starts with 16 tokens cached on 4 pages that running request 0 holds, and "
                f"cache.admit gives them to request 1 too: its run ({final} tokens, {need} pages) needs "
                f"{need - 4} pages more, request 0 may still take 96, and 96 + {need - 4} = 251, exactly "
                "the 251 available. Hint: count after cache.admit(req): the pages a request holds then "
                "include its cached prefix, which it does not need again",
            )
            _expect(
                batch,
                ("prefill", [(1, 16, 5)]),
                "request 1 fits, and its prompt continues after its 16 cached tokens",
                "the chunk starts at req.cached_len, which cache.admit sets to the cached prefix's length",
            )
        else:
            _not_admitted(
                s,
                req,
                f"its run ({final} tokens, {need} pages, 4 of them its cached prefix) needs {need - 4} pages "
                f"more and request 0 may still take 96: 252, one more than the 251 available. Hint: the 4 "
                "prefix pages are held by running request 0 (locked in the prefix cache), so they are "
                "neither free nor evictable and not in cache.num_available (compare with it, not with the "
                "free pages plus every cached page); and they are subtracted once, as pages request 1 "
                "holds after cache.admit, not a second time as a match (and each request's pages are "
                "rounded up, pages_for)",
            )
            _expect(batch, ("decode", [(0, 19, 1)]), "request 1 is one page short: decode the running request")
            assert (req.cached_len, req.prefix_len) == (0, 0), (
                f"request 1 was not admitted, but its cached_len and prefix_len are {req.cached_len} and "
                f"{req.prefix_len}. Hint: after cache.release(req, cache_it=False), set both back to 0"
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
    for order in ([1, 2], [2, 1]):
        # Request 1 (40 + 200 tokens, 60 pages) does not fit beside running request 0; request 2
        # (8 + 40 tokens, 12 pages) does.
        s = _sched()
        _running(s, 0, 8, max_tokens=900)
        reqs = {}
        for uid in order:
            reqs[uid] = _waiting(s, uid, 40 if uid == 1 else 8, max_tokens=200 if uid == 1 else 40)
        batch = decide(fn, s)
        arrived = f"requests {order[0]} then {order[1]} arrive (request 1 does not fit, request 2 does)"
        if order == [1, 2]:
            _expect(batch, ("decode", [(0, 8, 1)]), f"{arrived}: request 2 waits behind request 1", order_hint)
        else:
            _expect(batch, ("prefill", [(2, 0, 8)]), f"{arrived}: request 2 came first and fits", order_hint)
        # Prompts of 13 and 7 tokens with a budget of 18: the one that came first runs whole.
        s = _sched(budget=18)
        for uid in order:
            _waiting(s, uid, 13 if uid == 1 else 7)
        batch = decide(fn, s)
        expected = [(1, 0, 13), (2, 0, 5)] if order == [1, 2] else [(2, 0, 7), (1, 0, 11)]
        _expect(
            batch,
            ("prefill", expected),
            f"prompts of 13 (request 1) and 7 tokens (request 2), budget 18, request {order[0]} first",
            order_hint,
        )
    s = _sched()
    _running(s, 2, 6)
    _running(s, 1, 9)
    batch = decide(fn, s)
    _expect(
        batch,
        ("decode", [(2, 6, 1), (1, 9, 1)]),
        "scheduler.running is [request 2, request 1]",
        "decode items follow scheduler.running's order",
    )


# ---------------------------------------------------------------------------- the real engine
# Short plain-text prompts (no chat template) keep the model's work small. With a budget of 6
# tokens request 0 is chunked (6 + 2) and request 1 fills the rest of the second batch. Requests
# 1 and 2 reserve their whole run (up to 600 tokens, ~150 pages each), so request 2 waits until
# request 1 stops at its first "." and gives its pages back.
ENGINE_REQUESTS = [
    # (uid, arrives before step, text, sampling params)
    (0, 1, "One, two, three, four,", SamplingParams(max_tokens=3, ignore_eos=True)),
    (1, 1, "The capital of France is", SamplingParams(max_tokens=600, stop=["."])),
    (2, 2, "My favourite colour is", SamplingParams(max_tokens=600, stop=["."])),
]
ENGINE_BUDGET = 6

# More requests than fit at once, over many steps. Requests 0 and 1 reserve 100 pages each and
# request 2, arriving after they have decoded two tokens, the other 56 of the 256: an exact fit
# that holds only if a running request's worst case stays its prompt + max_new_tokens however many
# tokens it has. Requests 3-5 wait for pages, then for one of the max_running = 4 rows, while the
# first ones finish at their first "." (after 10-14 tokens) and their pages go to the prefix cache.
MANY_REQUESTS = [
    # (uid, arrives before step, text, longest run in tokens (prompt + max_tokens), stop)
    (0, 1, "One, two, three, four,", 400, ["."]),
    (1, 1, "Water boils at", 400, ["."]),
    (2, 4, "The sun rises in the", 221, ["."]),
    (3, 4, "Paris is a city in", 35, ["."]),
    (4, 5, "My favourite colour is", 10, []),
    (5, 6, "The capital of France is", 40, ["."]),
]
MANY_BUDGET = 8


def _many_requests(s: Scheduler) -> list:
    plays = []
    for uid, step, text, final, stop in MANY_REQUESTS:
        ids = s.tokenizer.encode(text)
        plays.append((uid, step, ids, SamplingParams(max_tokens=final - len(ids), stop=stop, ignore_eos=not stop)))
    return plays


def _run(fn, plays=None, budget: int = ENGINE_BUDGET) -> tuple[list, dict, dict, Scheduler]:
    """Run `plays` (default ENGINE_REQUESTS, as (uid, step, ids, params)) on the default model with
    `fn` deciding every step."""
    s = new_scheduler(max_prefill_tokens=budget, cache="radix")
    if plays is None:
        plays = [(uid, step, s.tokenizer.encode(text), p) for uid, step, text, p in ENGINE_REQUESTS]
    else:
        plays = plays(s)
    s.schedule_fn = fn
    steps: list = []
    for n in range(1, 200):
        for uid, step, ids, params in plays:
            if step == n:
                s.add_request(uid, ids, params)
        if s.is_idle and n > max(step for _, step, _, _ in plays):
            break
        if fn is not reference:
            _hide_engine_answer(s)
        batch = s._schedule_next_batch()
        if fn is not reference:
            if batch is None and not s.is_idle:
                raise AssertionError(
                    f"at step {n}, {len(s.waiting)} request(s) wait and {len(s.running)} run, but your "
                    "function returned None: they would wait forever"
                )
            _check_batch(s, batch)
            _check_rows(s, batch)
        steps.append(_items(batch))
        if batch is not None:
            s.run_batch(batch)
    else:
        raise AssertionError("the requests never finished within 200 steps")
    out = collect(s)
    return steps, out.tokens, out.reasons, s


def _reference_run():
    def compute():
        steps, tokens, reasons, s = _run(reference)
        assert s.reqs == {} and sorted(reasons.values()) == ["length", "stop", "stop"], (
            "setup: the reference run changed"
        )
        assert any(len(items) == 2 for phase, items in steps if phase == "prefill"), "setup: expected a chunk"
        return steps, tokens, reasons

    return remember("schedule", compute)


def _reference_many():
    def compute():
        steps, tokens, reasons, s = _run(reference, _many_requests, MANY_BUDGET)
        assert s.reqs == {} and len(reasons) == len(MANY_REQUESTS), "setup: the reference run changed"
        admitted_at = {}
        for n, step in enumerate(steps, 1):
            phase, items = step or (None, [])
            for uid, start, _ in items:
                if phase == "prefill" and start == 0:
                    admitted_at.setdefault(uid, n)
        assert admitted_at[2] == 4 and admitted_at[3] > 6, f"setup: admissions changed ({admitted_at})"
        return steps, tokens, reasons

    return remember("schedule_many", compute)


def _compare_runs(fn, plays, budget, reference_steps) -> None:
    require_passing([c for c in CASES if not c.engine], fn)
    try:
        steps, tokens, reasons, s = _run(fn, plays, budget)
    except OutOfPages as e:
        raise AssertionError(
            f"the engine ran out of KV pages with your scheduling ({e}): a request was admitted whose "
            "whole run did not fit, and it ran out half-way"
        ) from None
    ref_steps, ref_tokens, ref_reasons = reference_steps()
    for n, (got, want) in enumerate(zip(steps, ref_steps), 1):
        assert got == want, (
            f"step {n}: the engine's scheduler runs {_show_expected(want) if want else 'nothing'}, "
            f"yours ran {_show_expected(got) if got else 'nothing'}"
            + (f". {_step_hint(n, got, want, plays)}" if plays is not None else "")
        )
    assert len(steps) == len(ref_steps), f"{len(steps)} steps, the engine's scheduler needs {len(ref_steps)}"
    assert tokens == ref_tokens and reasons == ref_reasons, "the requests got different tokens from the reference"
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages, "KV pages are missing after every request finished"


def _step_hint(n, got, want, plays) -> str:
    """What a difference in the many-requests run most likely means."""
    started = (
        {uid for uid, start, _ in (want[1] if want else []) if start == 0} if want and want[0] == "prefill" else set()
    )
    mine = {uid for uid, start, _ in (got[1] if got else []) if start == 0} if got and got[0] == "prefill" else set()
    if started - mine:
        return (
            f"Hint: the engine admits request(s) {sorted(started - mine)} here and you do not. A running "
            "request's worst case is its prompt + max_new_tokens whatever it has generated so far "
            "(len(req.input_ids) + req.max_new_tokens, not req.total_len + max_new_tokens), minus the "
            "pages it holds now; pages of finished requests are in the prefix cache, evictable"
        )
    if mine - started:
        return (
            f"Hint: you admit request(s) {sorted(mine - started)} here and the engine does not: count "
            "every admitted request (running, and waiting ones with a row) against the pages and "
            "scheduler.max_running"
        )
    return "Hint: compare the two batches item by item: order, start positions and chunk sizes"


def case_real_engine(fn):
    _compare_runs(fn, None, ENGINE_BUDGET, _reference_run)


def case_many_steps(fn):
    _compare_runs(fn, _many_requests, MANY_BUDGET, _reference_many)


CASES = [
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
        "in the real engine",
        case_real_engine,
        "chunks, a late arrival and a request waiting for pages; compare your batches with the ones shown",
        engine=True,
    ),
    Case(
        "in the real engine, many steps, more requests than fit",
        case_many_steps,
        "six requests, an exact fit after two decode steps, waits for pages and for rows; compare your "
        "batches with the ones shown",
        engine=True,
    ),
]
SYMBOL = "schedule_next_batch"
SOLUTION = reference
