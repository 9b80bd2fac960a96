"""Exercise 5 — scheduling: `schedule_next_batch(scheduler) -> Batch | None`.

The scheduler calls it once per step (`Scheduler.schedule_fn`, from `_schedule_next_batch`) to
decide which tokens the engine computes next. The unit cases build a scheduler's state by hand
(requests waiting, part-way through a chunked prefill, decoding, pages held by others) and look
at the one decision; no model runs for them. The last two cases run chat requests on the default
model with the student's function deciding every step and compare each batch, the tokens and
the pages with the engine's own scheduler.
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


def _waiting(s: Scheduler, uid: int, n: int, max_tokens: int = 8) -> Req:
    req = s.add_request(uid, _ids(n, uid), SamplingParams(max_tokens=max_tokens, ignore_eos=True))
    assert req is not None, f"setup: request {uid} was rejected"
    return req


def _running(s: Scheduler, uid: int, n: int, max_tokens: int = 8) -> Req:
    """A request whose prompt is done and which has sampled one token, as after its prefill."""
    req = _waiting(s, uid, n, max_tokens)
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
        assert s.cache.held_pages(req) >= pages_for(it.end, s.cache.page_size), (
            f"request {req.uid} computes tokens up to position {it.end} but holds only "
            f"{s.cache.held_pages(req)} pages: reserve them with scheduler.cache.reserve(req, {it.end})"
        )
        if batch.is_prefill:
            assert req in s.waiting, f"request {req.uid} is in a prefill batch but not in scheduler.waiting"
            assert it.start == req.cached_len, (
                f"request {req.uid} has {req.cached_len} of its {len(req.input_ids)} prompt tokens in the "
                f"cache already (req.cached_len), but your chunk starts at {it.start}: the next chunk "
                "starts where the last one ended"
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
    if batch.is_prefill:
        assert batch.num_tokens <= s.max_prefill_tokens, (
            f"your prefill batch computes {batch.num_tokens} prompt tokens, but the token budget "
            f"(scheduler.max_prefill_tokens) is {s.max_prefill_tokens}: cut the last prompt into a chunk"
        )
    else:
        missing = [r.uid for r in s.running if r.uid not in seen]
        assert not missing, f"the decode batch leaves out running request(s) {missing}: decode every running request"


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


def _expect(batch, expected: tuple, what: str) -> None:
    assert _items(batch) == expected, f"{what}: expected {_show_expected(expected)}, got {_show(batch)}"


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


# ---------------------------------------------------------------------------- unit cases
def case_nothing(fn):
    s = _sched()
    batch = decide(fn, s)
    assert batch is None, f"nothing waits and nothing runs: return None, not {_show(batch)}"


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
    )
    assert s.reqs[2].table_idx < 0, "request 2 is not in the batch, so it must not be admitted (no row, no pages)"
    s = _sched(budget=16)
    for uid, n in enumerate([10, 9]):
        _waiting(s, uid, n)
    batch = decide(fn, s)
    _expect(
        batch,
        ("prefill", [(0, 0, 10), (1, 0, 6)]),
        "prompts of 10 and 9 tokens with a budget of 16: the first whole, then a 6-token chunk of "
        "the second fills the budget",
    )


def case_long_prompt(fn):
    s = _sched(budget=16)
    _waiting(s, 0, 40)
    batch = decide(fn, s)
    assert batch is not None, (
        "a 40-token prompt waits, alone, with a budget of 16 tokens, and you returned None: a prompt "
        "longer than the budget must still run, in chunks (chunked prefill), or it waits forever"
    )
    _expect(batch, ("prefill", [(0, 0, 16)]), "a 40-token prompt with a budget of 16: its first chunk is 16 tokens")


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
                f"is {_show(batch)}: schedule its next chunk first, without admitting it again"
            )
        _expect(batch, expected, f"step {n} of a 40-token prompt then a 5-token one, budget 16")
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
            f"take {others} of the {available} available: admit a request only if every "
            "admitted request's remaining worst case (prompt + max_new_tokens, minus the pages it holds) "
            "fits in scheduler.cache.num_available, or it may run out of pages half-way"
        ),
    )
    _expect(
        batch,
        ("decode", [(0, 8, 1)]),
        "request 1 does not fit yet: nothing can be prefilled, so decode the running request",
    )


def case_fifo(fn):
    s = _sched()
    _running(s, 0, 8, max_tokens=900)  # leaves room for 27 more pages
    first = _waiting(s, 1, 40, max_tokens=200)  # 60 pages: does not fit
    second = _waiting(s, 2, 8, max_tokens=40)  # 12 pages: would fit
    batch = decide(fn, s)
    _not_admitted(s, first, "it does not fit")
    assert second.table_idx < 0, (
        "request 2 was admitted ahead of request 1, which waits for pages: first come, first served "
        "(stop at the first request that does not fit), or a long request can wait forever behind a "
        "stream of short ones"
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
        "(evictable; cache.reserve evicts them when needed). cache.num_available counts both; "
        "checking only the free pages leaves the request waiting forever"
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


def _run(fn) -> tuple[list, dict, dict, Scheduler]:
    """Run ENGINE_REQUESTS on the default model with `fn` deciding every step."""
    s = new_scheduler(max_prefill_tokens=ENGINE_BUDGET, cache="radix")
    s.schedule_fn = fn
    steps: list = []
    for n in range(1, 100):
        for uid, step, text, params in ENGINE_REQUESTS:
            if step == n:
                s.add_request(uid, s.tokenizer.encode(text), params)
        if s.is_idle and n > 2:
            break
        if fn is not reference:
            _hide_engine_answer(s)
        batch = s._schedule_next_batch()
        if fn is not reference:
            if batch is None:
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
        raise AssertionError("the requests never finished within 100 steps")
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


def case_real_engine(fn):
    require_passing(CASES[:-1], fn)
    try:
        steps, tokens, reasons, s = _run(fn)
    except OutOfPages as e:
        raise AssertionError(
            f"the engine ran out of KV pages with your scheduling ({e}): a request was admitted whose "
            "whole run did not fit, and it ran out half-way"
        ) from None
    ref_steps, ref_tokens, ref_reasons = _reference_run()
    for n, (got, want) in enumerate(zip(steps, ref_steps), 1):
        assert got == want, (
            f"step {n}: the engine's scheduler runs {_show_expected(want) if want else 'nothing'}, "
            f"yours ran {_show_expected(got) if got else 'nothing'}"
        )
    assert len(steps) == len(ref_steps), f"{len(steps)} steps, the engine's scheduler needs {len(ref_steps)}"
    assert tokens == ref_tokens and reasons == ref_reasons, "the requests got different tokens from the reference"
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages, "KV pages are missing after every request finished"


CASES = [
    Case("nothing to run", case_nothing, "no waiting and no running request: return None"),
    Case("prefill before decode", case_prefill_first, "look at scheduler.waiting before scheduler.running"),
    Case("decode batch", case_decode, "ScheduledReq(req, req.total_len - 1, 1) for every running request"),
    Case("several prompts in one batch", case_several_prompts, "keep adding waiting requests while the budget lasts"),
    Case("token budget", case_budget, "chunk = min(req.remaining_prompt, budget left); stop when nothing is left"),
    Case("long prompt is chunked", case_long_prompt, "a prompt longer than the budget gets a chunk of the budget"),
    Case(
        "chunks continue where the last ended",
        case_chunks_continue,
        "a request with req.table_idx >= 0 is already admitted; its chunk starts at req.cached_len",
    ),
    Case(
        "a request that does not fit waits",
        case_does_not_fit,
        "sum every admitted request's worst case (pages_for(prompt + max_new_tokens) - pages held)",
    ),
    Case("first come, first served", case_fifo, "stop at the first waiting request that does not fit"),
    Case(
        "cached pages count as available",
        case_cached_pages_available,
        "compare with scheduler.cache.num_available (free + evictable), not the free list",
    ),
    Case(
        "a request that needs the whole pool", case_whole_pool, "a request fits when its need is <= what is available"
    ),
    Case("running-request limit", case_max_running, "count the admitted requests against scheduler.max_running"),
    Case(
        "in the real engine",
        case_real_engine,
        "chunks, a late arrival and a request waiting for pages; compare your batches with the ones shown",
        engine=True,
    ),
]
SYMBOL = "schedule_next_batch"
SOLUTION = reference
