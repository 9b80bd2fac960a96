"""Exercise 5's engine cases: requests on the default model with the student's function deciding
every step, compared batch by batch (then tokens and pages) with the engine's own scheduler.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.harness import collect, new_scheduler, remember, require_passing
from minisgl_edu.grading.schedule.budget_kept import check_budget_kept
from minisgl_edu.grading.schedule.checks import (
    check_batch,
    check_none_moved,
    check_rows,
    hide_engine_answer,
    items_of,
    show_expected,
)
from minisgl_edu.grading.schedule.engine_fields import check_engine_fields, snapshot
from minisgl_edu.kvcache import OutOfPages
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as reference

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


def run_steps(s: Scheduler, fn, plays: list, student: bool, max_steps: int, keep_order: bool = False) -> tuple:
    """Step `s` with `fn` deciding every batch until `plays` ((uid, step, ids, params): who arrives
    at which step) are all done -> (each step's batch, tokens, finish reasons, the scheduler). A
    student's batch is checked as in the unit cases (`keep_order`: the waiting queue left in
    arrival order, as the stretch asks). The one step driver of both parts' engine cases."""
    s.schedule_fn = fn
    steps: list = []
    for n in range(1, max_steps):
        for uid, step, ids, params in plays:
            if step == n:
                s.add_request(uid, ids, params)
        if s.is_idle and n > max(step for _, step, _, _ in plays):
            break
        if student:
            hide_engine_answer(s)
        before = [r.uid for r in s.waiting]
        waited, fields, budget = list(s.waiting), snapshot(s), s.max_prefill_tokens
        batch = s._schedule_next_batch()
        if student:
            check_none_moved(s, waited, fn)
            check_engine_fields(fields)
            check_budget_kept(s, budget)
            if batch is None and not s.is_idle:
                raise AssertionError(
                    f"at step {n}, {len(s.waiting)} request(s) wait and {len(s.running)} run, but your "
                    "function returned None: they would wait forever"
                )
            check_batch(s, batch)
            check_rows(s, batch)
            if keep_order:
                assert [r.uid for r in s.waiting] == before, f"step {n}: leave scheduler.waiting in arrival order"
        steps.append(items_of(batch))
        if batch is not None:
            s.run_batch(batch)
    else:
        raise AssertionError(f"the requests never finished within {max_steps} steps")
    out = collect(s)
    return steps, out.tokens, out.reasons, s


def _run(fn, plays=None, budget: int = ENGINE_BUDGET) -> tuple[list, dict, dict, Scheduler]:
    """Run `plays` (default ENGINE_REQUESTS) on the default model with `fn` deciding every step."""
    s = new_scheduler(max_prefill_tokens=budget, cache="radix")
    if plays is None:
        plays = [(uid, step, s.tokenizer.encode(text), p) for uid, step, text, p in ENGINE_REQUESTS]
    else:
        plays = plays(s)
    return run_steps(s, fn, plays, student=fn is not reference, max_steps=200)


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


def _compare_runs(fn, plays, budget, reference_steps, unit_cases: list[Case]) -> None:
    require_passing(unit_cases, fn)  # the model's run only for an answer that passes those first
    try:
        steps, tokens, reasons, s = _run(fn, plays, budget)
    except OutOfPages as e:
        raise AssertionError(
            f"the engine ran out of KV pages with your scheduling ({e}): a request was admitted whose "
            "whole run did not fit, and it ran out half-way"
        ) from None
    ref_steps, ref_tokens, ref_reasons = reference_steps()
    for n, (got, want) in enumerate(zip(steps, ref_steps), 1):
        if got != want:
            raise Mistake(
                f"step {n}: the engine's scheduler runs {show_expected(want) if want else 'nothing'}, "
                f"yours ran {show_expected(got) if got else 'nothing'}",
                _step_hint(got, want) if plays is not None else "",
            )
    assert len(steps) == len(ref_steps), f"{len(steps)} steps, the engine's scheduler needs {len(ref_steps)}"
    assert tokens == ref_tokens and reasons == ref_reasons, "the requests got different tokens from the reference"
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages, "KV pages are missing after every request finished"


def _step_hint(got, want) -> str:
    """What a difference in the many-requests run most likely means."""
    started = (
        {uid for uid, start, _ in (want[1] if want else []) if start == 0} if want and want[0] == "prefill" else set()
    )
    mine = {uid for uid, start, _ in (got[1] if got else []) if start == 0} if got and got[0] == "prefill" else set()
    if started - mine:
        return (
            f"the engine admits request(s) {sorted(started - mine)} here and you do not. A running "
            "request's worst case is its prompt + max_new_tokens whatever it has generated so far "
            "(len(req.input_ids) + req.max_new_tokens, not req.total_len + max_new_tokens), minus the "
            "pages it holds now; pages of finished requests are in the prefix cache, evictable"
        )
    if mine - started:
        return (
            f"you admit request(s) {sorted(mine - started)} here and the engine does not: count "
            "every admitted request (running, and waiting ones with a row) against the pages and "
            "scheduler.max_running"
        )
    return "compare the two batches item by item: order, start positions and chunk sizes"


def engine_cases(unit_cases: list[Case]) -> list[Case]:
    """The two cases in the real engine, each run only for an answer that passes `unit_cases`."""
    return [
        Case(
            "in the real engine",
            lambda fn: _compare_runs(fn, None, ENGINE_BUDGET, _reference_run, unit_cases),
            "chunks, a late arrival and a request waiting for pages; compare your batches with the ones shown",
            engine=True,
        ),
        Case(
            "in the real engine, many steps, more requests than fit",
            lambda fn: _compare_runs(fn, _many_requests, MANY_BUDGET, _reference_many, unit_cases),
            "six requests, an exact fit after two decode steps, waits for pages and for rows; compare your "
            "batches with the ones shown",
            engine=True,
        ),
    ]
