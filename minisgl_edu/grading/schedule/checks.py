"""Exercise 5's check of one decision, shared by the base part and its stretch.

`decide(fn, s)` calls the student's function once on scheduler `s` (the engine's own scheduling
methods hidden) and asserts that the batch is one the engine can run: items in the right queue,
starting where the request's cache ends, pages reserved exactly up to each item's end, the token
budget kept, every running request in a decode batch, rows that add up, nothing admitted and left
behind. `expect(batch, expected, what, hint)` compares with the one right batch; the `show*`
helpers print batches for the messages. The stretch's helpers (lpm.py) are at the end: its
decision, which must leave `scheduler.waiting` in arrival order, and its requests and their
cached prefix pages.
"""

from __future__ import annotations

import sys
from typing import Optional

from minisgl_edu.core import Batch, Req, SamplingParams, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.feedback import is_student_file
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.grading.schedule.admission_kept_quiet import check_admission_kept_quiet
from minisgl_edu.grading.schedule.budget_kept import check_budget_kept
from minisgl_edu.grading.schedule.engine_fields import check_engine_fields, snapshot
from minisgl_edu.grading.schedule.fit_after_undo import check_admitted
from minisgl_edu.grading.schedule.item_swapped import check_item_swapped
from minisgl_edu.grading.schedule.last_token import check_last_token
from minisgl_edu.grading.schedule.lpm_queue_positions import check_queue_positions
from minisgl_edu.grading.schedule.phase_name import ONE_PHASE, check_phase
from minisgl_edu.grading.schedule.release_watch import ReleaseWatch
from minisgl_edu.grading.schedule.reserve_at_admission import check_reserve_only_at_admission
from minisgl_edu.grading.schedule.running_alias import RUNNING_ALIASED, aliased_message
from minisgl_edu.kvcache import OutOfPages, pages_for
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as reference


def sched(budget: int = 64, cache: str = "naive", **overrides) -> Scheduler:
    return new_scheduler(max_prefill_tokens=budget, cache=cache, **overrides)


def show(batch: Optional[Batch]) -> str:
    if batch is None:
        return "no batch (None)"
    items = ", ".join(f"uid {it.req.uid}: {it.num_tokens} tok from {it.start}" for it in batch.items)
    return f"a {batch.phase} batch [{items}]"


def items_of(batch: Optional[Batch]) -> Optional[tuple]:
    if batch is None:
        return None
    return batch.phase, [(it.req.uid, it.start, it.num_tokens) for it in batch.items]


# The scheduler's own methods that make up the answer, named by reference (a renamed method fails
# here, at import, instead of silently no longer being hidden).
ENGINE_ANSWER = (
    Scheduler._schedule_prefill,
    Scheduler._schedule_decode,
    Scheduler._schedule_mixed,
    Scheduler.try_admit,
    Scheduler.outstanding_pages,
    Scheduler.admitted,
)


def hide_engine_answer(s: Scheduler) -> None:
    """The scheduler's own methods that make up the answer raise when the student's code calls them.
    Called from the package (the scheduler's `try_admit` asks its own `admitted()`; a grader's
    reference decision admits with `try_admit`), they run as always."""

    def hidden(method):
        real = method.__get__(s)  # the class's method, bound: hiding twice does not wrap twice

        def call(*args, **kwargs):
            if is_student_file(sys._getframe(1).f_code.co_filename):
                raise AssertionError(
                    f"your code called scheduler.{method.__name__}(), the engine's own scheduling code: write "
                    "the decision yourself (scheduler.cache and pages_for are yours to use)"
                )
            return real(*args, **kwargs)

        return call

    for method in ENGINE_ANSWER:
        setattr(s, method.__name__, hidden(method))


def admits_when_unclamped(fn) -> bool:
    """A request that needs the whole pool, its max_tokens already the limit clamped to the context:
    admitted then? (An answer that counts sampling_params.max_tokens admits it only so.)"""
    s = sched()
    req = s.add_request(0, list(range(1, 9)), SamplingParams(max_tokens=5000, ignore_eos=True))
    req.sampling_params.max_tokens = req.max_new_tokens
    decide(fn, s)
    return req.table_idx >= 0


def decide(fn, s: Scheduler) -> Optional[Batch]:
    """Call the student's function once and check that its batch is one the engine can run. A
    request's fields changed before `cache.release()` read them are named first (release_watch.py):
    the leak or crash that follows says nothing of the order of the steps."""
    if fn is not reference:
        hide_engine_answer(s)
    watch = ReleaseWatch(s)
    waited, fields, budget = list(s.waiting), snapshot(s), s.max_prefill_tokens
    try:
        with watch:
            batch = _call(fn, s)
    except Exception:
        if watch.mistake() is None:
            raise
        batch = None
    if watch.mistake() is not None:
        raise watch.mistake()
    check_none_moved(s, waited, fn)
    check_engine_fields(fields)
    check_budget_kept(s, budget)
    check_last_token(s, batch, budget, None if fn is reference else fn)
    check_batch(s, batch, fn)
    try:
        check_rows(s, batch)
    except AssertionError:  # the probe builds schedulers of its own, which reset `s`'s page table: last
        check_admission_kept_quiet(s, batch, None if fn is reference else fn)
        raise
    try:
        s.cache.check()
    except AssertionError as e:
        raise AssertionError(f"after your decision the KV pages do not add up: {e}") from None
    return batch


def _call(fn, s: Scheduler) -> Optional[Batch]:
    """The student's function, with the engine's errors it can cause told in its terms."""
    try:
        return fn(s)
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


MOVED_HINT = (
    "leave a request in scheduler.waiting when you schedule its prompt's last chunk: it moves to "
    "scheduler.running when that chunk's result lands (the engine does it after the batch runs), not when "
    "it is scheduled"
)


def check_none_moved(s: Scheduler, waited: list, fn=None) -> None:
    """No request that waited when the decision began is running after it: a prompt's last chunk
    takes its request to scheduler.running when the chunk's result lands (`Scheduler.advance`,
    after the batch runs), never in the decision that schedules the chunk. A request left in both
    lists may have been added through a name for scheduler.running: `fn` is probed for that."""
    moved = [r for r in waited if any(r is x for x in s.running)]
    if moved:
        req = moved[0]
        also_waiting = any(req is x for x in s.waiting)
        aliased = aliased_message(fn) if fn is not None and also_waiting else ""
        where = (
            f"request {req.uid} was in scheduler.waiting when your function was called and is in "
            f"scheduler.running after it (status {req.status.name})"
        )
        if aliased:
            raise Mistake(where + aliased, RUNNING_ALIASED)
        raise Mistake(
            f"{where}, before the batch with its last prompt chunk has run: that chunk's K/V and the "
            "request's first token do not exist yet",
            MOVED_HINT,
        )


def check_batch(s: Scheduler, batch, fn=None) -> None:
    """The batch is one the engine can run: a Batch of a known phase with items, each request in it
    once, every item right for its request, the budget kept, no running request left out. `fn`, the
    answer, is asked a control question when the budget is broken (see `_head_not_budgeted`)."""
    if batch is None:
        return
    assert isinstance(batch, Batch), f"return a Batch or None, not {type(batch).__name__}"
    check_phase(s, batch)
    if not batch.items:
        raise Mistake(
            f"you returned a {batch.phase} Batch with no items: an empty batch means a step that computes "
            "nothing, and the next step would decide the same",
            "when there is nothing to do, return None: never a Batch without items",
        )
    seen = set()
    for it in batch.items:
        assert isinstance(it, ScheduledReq), "a batch's items are ScheduledReq(req, start, num_tokens)"
        req = it.req
        if req.uid in seen:
            check_queue_positions(fn, req.uid)  # the duplicate of positions used on the wrong list
            raise AssertionError(f"request {req.uid} is twice in the batch")
        seen.add(req.uid)
        if batch.is_prefill and (it.num_tokens < 1 or it.start != req.cached_len):
            check_item_swapped(fn)  # ScheduledReq(req, chunk, start): confirmed on a scene of its own
        if it.num_tokens < 1:
            raise Mistake(
                f"request {req.uid} is in the batch with {it.num_tokens} tokens to compute",
                "stop adding requests once the token budget is used up: a batch item computes at least one token",
            )
        check_admitted(req, fn)
        if batch.is_prefill:
            _check_prefill_item(s, it)
        else:
            _check_decode_item(s, it)
        _check_item_pages(s, batch, it, fn)
    _check_batch_whole(s, batch, seen, fn)


def _check_prefill_item(s: Scheduler, it: ScheduledReq) -> None:
    """A prefill item's request is waiting, and its chunk starts where the request's cache ends and
    stops at the end of its prompt."""
    req = it.req
    if req in s.running:
        what = "a decode item" if (it.start, it.num_tokens) == (req.total_len - 1, 1) else "an item"
        raise Mistake(
            f"request {req.uid} is running (in scheduler.running, its prompt done), but your prefill batch "
            f"also carries {what} for it ({it.num_tokens} tok from {it.start}): this exercise never mixes "
            "prompt chunks and decode tokens in one batch",
            ONE_PHASE,
        )
    assert req in s.waiting, f"request {req.uid} is in a prefill batch but not in scheduler.waiting"
    if it.start != req.cached_len:
        raise Mistake(
            f"request {req.uid} has {req.cached_len} of its {len(req.input_ids)} prompt tokens in the "
            f"cache already (req.cached_len), but your chunk starts at {it.start}: the next chunk "
            "starts where the last one ended",
            "an item's start is req.cached_len (cache.admit sets it to the cached prefix's length; the "
            "engine moves it on after each chunk), never 0 for a request part-way through its prompt",
        )
    if it.end > len(req.input_ids) and it.start == req.prefix_len > 0:
        raise Mistake(
            f"request {req.uid}: your prefill item covers {it.num_tokens} tokens from {it.start}, the end "
            f"of its cached prefix, so it reaches position {it.end}, past the end of its "
            f"{len(req.input_ids)}-token prompt",
            "work the chunk out after cache.admit(req): admit sets req.cached_len to the cached prefix, "
            "and req.remaining_prompt shrinks with it; read before admit, it is the whole prompt",
        )
    if it.end > len(req.input_ids) and req.cached_len > req.prefix_len:
        raise Mistake(
            f"request {req.uid} is part-way through its prompt ({req.cached_len} of its "
            f"{len(req.input_ids)} tokens in the cache, {req.prefix_len} of them the cached prefix it was "
            f"admitted with): your chunk of {it.num_tokens} tokens from {it.start} reaches position "
            f"{it.end}, past the end of its prompt, of which {req.remaining_prompt} token(s) are left",
            "a chunk is sized from where the cache ends now: req.remaining_prompt shrinks after every chunk "
            "(req.cached_len moves on), unlike the prefix the request was admitted with (req.prefix_len)",
        )
    assert it.end <= len(req.input_ids), (
        f"request {req.uid}: your prefill item reaches position {it.end}, past the end of its "
        f"{len(req.input_ids)}-token prompt (its remaining prompt is req.remaining_prompt)"
    )


def _check_decode_item(s: Scheduler, it: ScheduledReq) -> None:
    """A decode item's request is running, and the item computes its newest token only."""
    req = it.req
    assert req in s.running, f"request {req.uid} is in a decode batch but not in scheduler.running"
    if (it.start, it.num_tokens) != (req.total_len - 1, 1):
        raise Mistake(
            f"request {req.uid}: a decode item computes one token, the newest, at position "
            f"req.total_len - 1 = {req.total_len - 1}; yours computes {it.num_tokens} from {it.start}",
            "a decode item is ScheduledReq(req, req.total_len - 1, 1): the newest token only",
        )


def _check_item_pages(s: Scheduler, batch: Batch, it: ScheduledReq, fn=None) -> None:
    """The item's request holds pages exactly up to the item's end: none missing, and none taken
    early (a page held before it is needed is one the admission of the others counted as free)."""
    req = it.req
    held, needed = s.cache.held_pages(req), pages_for(it.end, s.cache.page_size)
    if held < needed and not batch.is_prefill:
        ps = s.cache.page_size
        raise Mistake(
            f"request {req.uid}'s decode item computes its newest token at position {it.start} "
            f"(req.total_len - 1), slot {it.start % ps} of page {it.start // ps} ({ps} tokens a page), so it "
            f"needs {needed} pages, but it holds only {held}: the page of the token this step computes "
            "was not reserved",
            "in every decode step, reserve for every running request, with no condition of your own: "
            "scheduler.cache.reserve(req, req.total_len). It takes only the pages missing: none in most steps, "
            "one when the newest token (position req.total_len - 1) is the first of a page, "
            "req.total_len % page_size == 1",
        )
    if held < needed and req.cached_len > req.prefix_len and held == pages_for(req.cached_len, s.cache.page_size):
        check_reserve_only_at_admission(fn, it, held, needed)  # no reserve for a continuing chunk? (a probe confirms)
    if held < needed:
        raise Mistake(
            f"request {req.uid} computes tokens up to position {it.end} but holds only {held} pages "
            f"(it needs {needed} of {s.cache.page_size} tokens)",
            "before you add an item, scheduler.cache.reserve(req, start + num_tokens) makes the request hold "
            "pages up to the item's end",
        )
    if held != needed and not batch.is_prefill and held == pages_for(it.end + 1, s.cache.page_size):
        raise Mistake(
            f"request {req.uid}'s decode item computes position {it.start} and ends at {it.end} "
            f"(req.total_len), which take {needed} pages of {s.cache.page_size} tokens, but it holds {held}: "
            "it reserved room for the token this step samples, a page before it is needed",
            "a decode item ends at req.total_len: reserve(req, req.total_len), not total_len + 1; the token "
            "this step samples gets its K/V, and its page, in the next step's item",
        )
    prompt_pages = pages_for(len(req.input_ids), s.cache.page_size)
    if held != needed and batch.is_prefill and it.end < len(req.input_ids) and held == prompt_pages:
        # the whole prompt's pages, taken when the request was admitted: later chunks' pages held early
        raise Mistake(
            f"request {req.uid} computes tokens up to position {it.end}, which take {needed} pages of "
            f"{s.cache.page_size} tokens, but it holds {held}, the pages of its whole {len(req.input_ids)}-token "
            "prompt: the later chunks' pages are taken before they are needed, from pages the admission of the "
            "others counted as available",
            "reserve up to the item's end, scheduler.cache.reserve(req, start + num_tokens), not the whole prompt "
            "at admission: each later chunk reserves its own pages in the step that computes it",
        )
    if held != needed:
        raise Mistake(
            f"request {req.uid} computes tokens up to position {it.end}, which take {needed} pages of "
            f"{s.cache.page_size} tokens, but it holds {held}: a page taken before it is needed is one "
            "that the admission of the others counted as available, so they can run out of pages",
            "reserve up to the item's end, scheduler.cache.reserve(req, start + num_tokens), never a page "
            "count per chunk: pages belong to the request (a chunk that starts inside a page continues on it)",
        )


def _check_batch_whole(s: Scheduler, batch: Batch, seen: set[int], fn=None) -> None:
    """The batch as a whole: a prefill batch keeps the token budget, a decode batch has every
    running request (`seen`: the uids in the batch)."""
    if batch.is_prefill:
        if batch.num_tokens > s.max_prefill_tokens:
            _head_not_budgeted(s, batch, fn)
            raise Mistake(
                f"your prefill batch computes {batch.num_tokens} prompt tokens, but the token budget "
                f"(scheduler.max_prefill_tokens) is {s.max_prefill_tokens}",
                "at most scheduler.max_prefill_tokens prompt tokens in one batch: a request gets what is left of "
                "the budget, min(req.remaining_prompt, budget left); the rest of its prompt runs in the next steps",
            )
    else:
        missing = [r.uid for r in s.running if r.uid not in seen]
        if missing:
            raise Mistake(
                f"the decode batch leaves out running request(s) {missing}",
                "a decode batch has one item for every request in scheduler.running, in that order",
            )


def _head_not_budgeted(s: Scheduler, batch: Batch, fn) -> None:
    """A prefill batch over the budget: raise the mistake of leaving the chunk of a request part-way
    through its prompt off the budget, when that is what happened. The other items' chunks then fit
    in the budget on their own, and the answer keeps the budget when no request is part-way through
    its prompt (the control: prompts of 10 and 9 tokens, budget 16)."""
    head = [it for it in batch.items if it.req.cached_len > it.req.prefix_len]  # admitted at an earlier step
    head_tokens = sum(it.num_tokens for it in head)
    if fn is None or not head or batch.num_tokens - head_tokens > s.max_prefill_tokens:
        return
    control = sched(budget=16)
    for uid, n in enumerate([10, 9]):
        waiting(control, uid, n)
    hide_engine_answer(control)
    try:
        kept = fn(control)
    except Exception:
        return
    if not isinstance(kept, Batch) or sum(it.num_tokens for it in kept.items) > 16:
        return
    first = head[0]
    raise Mistake(
        f"your prefill batch computes {batch.num_tokens} prompt tokens, but the token budget "
        f"(scheduler.max_prefill_tokens) is {s.max_prefill_tokens}: request {first.req.uid}, part-way through "
        f"its prompt, has a chunk of {first.num_tokens} tokens, and the other requests' chunks take "
        f"{batch.num_tokens - head_tokens} more, as if its chunk did not count (prompts of 10 and 9 tokens with "
        "a budget of 16, nobody part-way through, keep the budget)",
        "the chunk of a request part-way through its prompt (req.table_idx >= 0, admitted at an earlier step) "
        "counts against scheduler.max_prefill_tokens too: take it off the budget like any new request's chunk, "
        "before the requests behind it get what is left",
    )


def check_rows(s: Scheduler, batch: Optional[Batch]) -> None:
    admitted = s.admitted()
    used = len(s.cache.page_table.used_rows())
    if used != len({r.table_idx for r in admitted}):
        raise Mistake(
            f"{used} page-table rows are in use but only {len(admitted)} request(s) hold one: a row was "
            "taken and then lost (a request admitted twice?)",
            "a request part-way through its prompt already holds its row (req.table_idx >= 0): give it its next "
            "chunk, never admit it again",
        )
    in_batch = {it.req.uid for it in batch.items} if batch is not None else set()
    _check_refusal_undone(s, used, in_batch)
    # every row taken in this decision, and a request refused: a limit, one too high
    fresh = not s.running and not any(r.table_idx >= 0 and r.cached_len > r.prefix_len for r in s.waiting)
    if used == s.max_running + 1 and fresh and any(r.table_idx < 0 for r in s.waiting):
        raise Mistake(
            f"{used} requests hold a page-table row, but at most scheduler.max_running = {s.max_running} may be "
            f"admitted at once: your code refused a request only once {used} were admitted, one too late",
            "with scheduler.max_running requests admitted already the limit is reached: refuse the next one then, "
            "since it would make max_running + 1",
        )
    if used > s.max_running:
        raise Mistake(
            f"{used} requests hold a page-table row, but at most scheduler.max_running = {s.max_running} "
            "may be admitted at once",
            "count every admitted request (running, and waiting ones that hold a row) against "
            "scheduler.max_running before you admit another",
        )
    for r in s.waiting:
        if r.table_idx >= 0 and r.uid not in in_batch and r.cached_len > r.prefix_len:
            where = "at the head of" if s.waiting[0] is r else f"behind request {s.waiting[0].uid} in"
            raise Mistake(
                f"request {r.uid} is part-way through its prompt ({r.cached_len} of {len(r.input_ids)} "
                f"tokens in the cache; it holds a page-table row and waits {where} "
                "scheduler.waiting) but is not in the batch",
                "a request part-way through its prompt (req.table_idx >= 0) gets its next chunk first, "
                "without being admitted again",
            )
        used = sum(it.num_tokens for it in batch.items) if batch is not None and batch.phase == "prefill" else 0
        if r.table_idx >= 0 and r.uid not in in_batch and used >= s.max_prefill_tokens:
            raise Mistake(
                f"request {r.uid} holds a page-table row but is not in the batch, whose items already use the "
                f"whole token budget ({used} of {s.max_prefill_tokens} tokens): it was admitted with no token "
                "left for it",
                "look at the budget before admitting: once it is used up, stop before cache.admit(req), since a "
                "request admitted without an item keeps its row (and its cached prefix locked)",
            )
        if r.table_idx >= 0 and r.uid not in in_batch:
            raise Mistake(
                f"request {r.uid} holds a page-table row but is not in the batch: a request that does "
                "not fit must be left as it was",
                "undo the admission of a request that does not fit: what cache.admit gave it (its row, its cached "
                "prefix and the lock on it) goes back, scheduler.cache.release(req, cache_it=False), then "
                "req.cached_len = req.prefix_len = 0",
            )


KEPT_ROW_HINT = (
    "a refused admission must be undone: what cache.admit gave the request (its row, its cached prefix and the "
    "lock on it) goes back, scheduler.cache.release(req, cache_it=False), then req.cached_len = req.prefix_len = 0; "
    "or look at scheduler.max_running before cache.admit(req)"
)


def _check_refusal_undone(s: Scheduler, used: int, in_batch: set[int]) -> None:
    """Too many rows in use, but only because requests the answer refused still hold the row
    `cache.admit` gave them (admitted in this decision, not in the batch): the refusal at
    scheduler.max_running came on time, and what it left behind is the mistake, not the limit."""
    kept = [r for r in s.waiting if r.table_idx >= 0 and r.uid not in in_batch and r.cached_len == r.prefix_len]
    if used <= s.max_running or not kept or used - len(kept) > s.max_running:
        return
    raise Mistake(
        f"{used} requests hold a page-table row, but at most scheduler.max_running = {s.max_running} may be "
        f"admitted at once: request(s) {[r.uid for r in kept]} are not in the batch (refused, and the limit was "
        "reached on time) but still hold the row cache.admit gave them, and their cached prefix stays locked",
        KEPT_ROW_HINT,
    )


def expect(batch, expected: tuple, what: str, hint: str = "") -> None:
    """`batch` must be `expected`; `hint` is this assertion's own (none: the case's)."""
    if items_of(batch) != expected:
        raise Mistake(f"{what}: expected {show_expected(expected)}, got {show(batch)}", hint)


def show_expected(expected) -> str:
    phase, items = expected
    return f"a {phase} batch [" + ", ".join(f"uid {u}: {n} tok from {st}" for u, st, n in items) + "]"


def admits(fn, s: Scheduler, req: Req, even_if_it_fails: bool = False) -> bool:
    """Whether `fn` admits `req` on `s`: a control that tells which mistake a margin's failure shows. A call
    that raises counts as a refusal, unless `even_if_it_fails` (the admission is read all the same)."""
    hide_engine_answer(s)
    try:
        fn(s)
    except Exception:
        if not even_if_it_fails:
            return False
    return req.table_idx >= 0


def not_admitted(s: Scheduler, req: Req, why: str, hint: str = "", applies=None) -> None:
    """`req` must still wait, unadmitted; `hint` is shown only when `applies()` (a control) says so."""
    if req not in s.waiting:
        raise Mistake(
            f"request {req.uid} is no longer in scheduler.waiting, but it does not fit yet",
            "a request that does not fit yet keeps waiting in scheduler.waiting (it fits once others finish): "
            "add_request has already rejected every prompt that could never fit",
        )
    if req.table_idx >= 0:
        raise Mistake(f"request {req.uid} was admitted, but {why}", hint if applies is None or applies() else "")


def admitted_now(s: Scheduler, req: Req, why: str, hint: str = "", applies=None) -> None:
    if req.table_idx < 0:
        raise Mistake(f"request {req.uid} was not admitted, but {why}", hint if applies is None or applies() else "")


# ---------------------------------------------------------------------------- the stretch's (lpm.py) helpers
def prefix_pages(scheduler, req: Req) -> int:
    """The prefix pages `cache.admit(req)` would give `req` (whole pages, the last token left out)."""
    _, pages = scheduler.cache.match(req)
    return len(pages)


def decide_in_order(fn, s: Scheduler) -> Optional[Batch]:
    """One decision, checked as in the base part, and `scheduler.waiting` left in arrival order."""
    before = [r.uid for r in s.waiting]
    batch = decide(fn, s)
    after = [r.uid for r in s.waiting]
    if after != before and sorted(after) == sorted(before):  # the same requests, reordered
        raise Mistake(
            f"scheduler.waiting was {before} before your decision and {after} after: leave the queue in "
            "arrival order and change only the order you consider the requests in (the next step breaks "
            "ties, and falls back to first come, first served, by arrival order)",
            "leave scheduler.waiting in arrival order (do not sort or rebuild the queue): sort a list of "
            "your own, list(scheduler.waiting), and walk that",
        )
    assert after == before, f"scheduler.waiting was {before} before your decision and {after} after"
    return batch


def lpm_sched(budget: int = 64, cache: str = "radix", **overrides) -> Scheduler:
    return new_scheduler(max_prefill_tokens=budget, cache=cache, **overrides)


def add_waiting(s: Scheduler, uid: int, ids: list[int], max_tokens: int = 8, pages: Optional[int] = None) -> Req:
    """A waiting request; `pages`: the cached prefix pages it must find (a check of the setup)."""
    req = s.add_request(uid, ids, SamplingParams(max_tokens=max_tokens, ignore_eos=True))
    assert req is not None, f"setup: request {uid} was rejected"
    if pages is not None:
        assert prefix_pages(s, req) == pages, f"setup: request {uid} should find {pages} cached pages"
    return req


def pages_of(s: Scheduler, uids) -> str:
    return ", ".join(f"request {u}: {prefix_pages(s, s.reqs[u])}" for u in uids)


def expect_order(batch, want: list[int], s: Scheduler, what: str, shown: list[int]) -> None:
    got = [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else None
    assert got == want, (
        f"{what}: the prefill batch should hold requests {want} in that order, yours is {show(batch)} "
        f"(cached prefix pages, in arrival order: {pages_of(s, shown)})"
    )
