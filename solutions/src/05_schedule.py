from cells import code, md

CELLS = [
    md("""
# Exercise 5 — Which tokens run next?

**Goal:** write the scheduler's decision for one step: a prefill batch under the token budget
(chunking a long prompt), or a decode batch, and which waiting requests may start at all.
**Time:** about 40 minutes.

Every step of `normal_loop` calls `Scheduler._schedule_next_batch`, which calls
`self.schedule_fn(self)`: your function. It returns the `Batch` the engine runs next, or `None`
when there is nothing to do. The package's own version is `schedule_next_batch` in
`minisgl_edu/scheduler/scheduler.py`, with the `Scheduler` methods `_schedule_prefill`, `try_admit`
and `_schedule_decode`: don't read them before you try, and don't call them (the grader hides them).
Chapter 04 watches the decision from outside; this text says what it must satisfy, not how.

The state you read and change:

| what | where |
|---|---|
| requests not yet decoding, in arrival order; the head may be part-way through its prompt | `scheduler.waiting` (a deque of `Req`) |
| requests whose prompt is done, one new token per step | `scheduler.running` (a list) |
| the token budget of one prefill batch | `scheduler.max_prefill_tokens` |
| at most this many requests admitted at once | `scheduler.max_running` |
| prompt tokens already in the KV cache / still to compute | `req.cached_len` / `req.remaining_prompt` |
| the longest answer the request may get (`max_tokens`, clamped to the context) | `req.max_new_tokens` |
| the request's page-table row; `-1` until it is admitted | `req.table_idx` |
| pages and rows: `admit(req)` (a row, and the request's cached prefix: it sets `req.cached_len` and `req.prefix_len`), `reserve(req, n)` (pages for its first `n` tokens), `release(req, cache_it=False)` (everything back), `held_pages(req)`, `num_available`, `page_size` | `scheduler.cache` |
| whole pages for `n` tokens (rounded up) | `pages_for(n, page_size)` |

## The contract

**What you return.** `Batch("prefill", items)` or `Batch("decode", items)`, where each item is
`ScheduledReq(req, start, num_tokens)`: this step computes the K/V of the request's tokens at
positions `start` to `start + num_tokens - 1` (its *end* is `start + num_tokens`). Or `None` when
nothing can run at all; never a batch without items.

**Prefill first.** If any prompt token can be computed this step, the batch is a prefill batch;
a decode batch only when none can. (A new request then gets its first token without waiting for
the others to finish.)

**A prefill batch** holds waiting requests only, each once, and:

* **in queue order, nobody overtaking:** its requests are the first ones of `scheduler.waiting`,
  in that order. A request that cannot be admitted yet ends the batch there, even if a smaller one
  behind it would fit (otherwise a long request can wait forever behind short ones);
* **the budget:** its items add up to at most `scheduler.max_prefill_tokens` tokens, and it is as
  full as the budget and the queue allow: every item but the last covers its request's whole
  remaining prompt, and the last is cut only where the budget runs out (**chunked prefill**; a
  chunk may be any size from one token). A prompt longer than the budget runs over several steps;
* **each item continues its prompt:** `start` is `req.cached_len` (tokens already in the cache,
  from earlier chunks or a cached prefix), and the item stays within the prompt;
* **a request part-way through its prompt** (it holds a row, `req.table_idx >= 0`) is admitted
  already: it continues, and is not admitted again.

**Admission.** A request that holds no row joins a prefill batch only once admitted (it then holds
a row). Admission must keep this invariant, which the rest of the engine relies on (a running
request never runs out of pages half-way, so nothing ever has to be pre-empted):

* every admitted request (running, and waiting with a row) may grow to `len(req.input_ids) +
  req.max_new_tokens` tokens, which take `pages_for(that, page_size)` whole pages. Summed over
  the admitted requests, the pages each may still take beyond what it holds now must be at most
  `cache.num_available`. A request whose admission would break it waits; one that keeps it exactly
  (equal) is admitted;
* the pages a request *holds* include the cached prefix that `cache.admit` gave it: those it does
  not need again. `cache.num_available` is the free pages plus the cached pages that no admitted
  request holds (`reserve` evicts those when needed); cached pages that a running request holds are
  neither;
* at most `scheduler.max_running` requests are admitted at once (the engine has exactly that many
  page-table rows, and `cache.admit` takes one: check the limit before you call it);
* a request that is not admitted leaves no trace: no row, no pages, `cached_len` and `prefix_len` 0.

A prompt that could never fit (longer than the KV cache or the context) does not reach you:
`Scheduler.add_request` rejects it at once with an error for the client (`_validate`), so every
request in `waiting` fits once it is alone.

**Pages.** When you return, every request in the batch holds exactly the pages of its tokens up to
its item's end, `pages_for(end, page_size)`: not fewer (the engine writes the K/V there) and not
more (a page taken early is one that admission counted as available to others).

**A decode batch** has one item for every request in `scheduler.running`, in that order, each
computing the request's newest token (the one at position `req.total_len - 1`).

**What the grader plays.** Unit cases build a scheduler's state by hand and look at your one
decision: nothing to do; prefill before decode; several prompts, an exact budget and chunks
(lengths that are not multiples of the page size of 4, budgets that fit exactly, miss by one token
or leave one token over, chunks that end on a page boundary or one token past it); requests that
do not fit (memory that fits exactly or is one page short), one that must not be overtaken, cached
pages that count as available, a prompt whose prefix is cached on pages that a running request holds
while memory is tight, the request limit, and the same requests in both arrival orders. After each
decision it checks the batch against this contract and the pages and rows with `cache.check()`. Then
the real engine runs with your function deciding every step and every batch must equal the engine's:
three short requests (a chunked prompt, a late arrival, one waiting for pages), and six requests
over about thirty steps, more than fit at once (one admitted on an exact fit after others have
decoded, others waiting for pages and then for a row). A failed case says what went wrong and how
to look at it.

**How mini-sglang does it** (`python/minisgl/scheduler/`): the same prefill-first rule
(`Scheduler._schedule_next_batch` tries `PrefillManager.schedule_next_batch` first, then
`DecodeManager.schedule_next_batch`), a token budget (`max_extend_tokens`, 8192 by default) and
the same first-come stop. It counts its reservation in tokens (`PrefillAdder`: prompt left plus
`output_len` of every request added, plus what the running ones may still decode, against free
plus evictable tokens), where this engine counts pages. A chunked request there is a new
`ChunkedReq` each step, and pages are taken for the whole batch in `_prepare_batch`; here the same
`Req` keeps its place at the head of `waiting` and `reserve` runs per item. A prompt too long for
the context is dropped with a log line there; here the client gets an error.

The engine's version has three more checks for the overlap loop (GPU): a prompt whose last chunk
is still in flight, decode tokens not yet seen, and page-table rows that finished requests keep
until their batch lands. Leave them out: the grader runs `normal_loop`, where none of them happens.
"""),
    code("""
from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, Req, ReqStatus, ScheduledReq
from minisgl_edu.grading import check
from minisgl_edu.kvcache import pages_for
"""),
    code('''
def try_admit(scheduler, req: Req) -> bool:
    """Admit `req` if its whole run fits beside everyone admitted; otherwise change nothing."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    admitted = scheduler.running + [r for r in scheduler.waiting if r.table_idx >= 0]
    if len(admitted) >= scheduler.max_running:
        return False
    cache.admit(req)  # its row and cached prefix first: the prefix pages need not be counted
    need = 0
    for r in admitted + [req]:
        final = len(r.input_ids) + r.max_new_tokens
        need += max(pages_for(final, cache.page_size) - cache.held_pages(r), 0)
    if need > cache.num_available:
        cache.release(req, cache_it=False)
        req.cached_len = req.prefix_len = 0
        return False
    return True
    ### END SOLUTION


def schedule_next_batch(scheduler) -> Optional[Batch]:
    """The next batch: prefill under the token budget if anyone waits, else decode; None if idle."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    items = []
    budget = scheduler.max_prefill_tokens
    for req in scheduler.waiting:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # first come, first served
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
    ### END SOLUTION
'''),
    md("""
## Check your answer

`check` plays the scenarios listed under "What the grader plays" above: first the unit cases (the
model does not run for them), then the two engine runs, which start only once every unit case
passes. Every batch must equal the engine's own, and so must the tokens.
"""),
    code("""
result = check("schedule", schedule_next_batch)
"""),
    md("""
## Stretch: longest prefix match first (not in this engine)

Your `schedule_next_batch` considers waiting requests first come, first served. SGLang can do
otherwise (`--schedule-policy lpm`, *longest prefix match*; its default is `fcfs`): before it builds
a prefill batch, it matches every waiting request against the prefix cache and considers the
ones with the longest cached prefix first (`SchedulePolicy.calc_priority` in
`python/sglang/srt/managers/schedule_policy.py`). Such a request computes fewer tokens and is
admitted before eviction takes its cached pages away; when it shares pages with a running
request, it also needs fewer new pages. Write that order into a function of its own,
`schedule_next_batch_lpm(scheduler)`. Everything the base part does stays as it was (prefill
first, the token budget and chunks, admission of the whole run, stopping at the first request
that does not fit, the decode batch), except **the order in which the requests not yet
admitted are considered**:

* **the key** is the number of prefix pages `cache.admit(req)` would give the request, which is
  what `scheduler.cache.match(req)` returns (`(handle, pages)`): whole pages, and never the
  prompt's last token, whose logits give the first output token. Not a count of tokens, and not
  the prompt's length;
* **most cached pages first**; requests with the same number (none cached at all, for instance)
  keep their **arrival order**;
* when **more than `LPM_MAX_WAITING` = 8** requests are in `scheduler.waiting`, keep the arrival
  order and do not call `cache.match` at all (SGLang does the same above 128 waiting requests:
  matching every one of them every step costs too much, and a match marks the cached prefix it
  finds as just used, which changes what eviction frees next);
* a request part-way through a chunked prefill (it holds a row, `req.table_idx >= 0`) still goes
  first, as in the base part; the decode batch keeps `scheduler.running` order;
* `scheduler.waiting` itself stays in arrival order: change only the order you consider the
  requests in (the next step breaks ties by arrival order again).

With the naive cache every match is empty, so the order is plain first come, first served. You
may call your own `try_admit` from above; calling the package's `schedule_next_batch` (or the
scheduler's `_schedule_prefill`, `scheduler.try_admit`, ...) is not an answer. SGLang's version has one more
rule, left out here (in-batch prefix caching): of the waiting requests that share a prefix not yet
cached, it keeps the first in place and moves the others to the end of the queue, so that the
prefix is computed once and they find it cached later.
mini-sglang (`PrefillManager.schedule_next_batch`) and this engine only do first come, first served.

`check` grades it on its own score line, `schedule_lpm`: unit cases built by hand (a cached
prefix that a later request shares, ties, whole pages, the threshold, a chunked prefill, a request
that fits because its prefix pages are already held, a prefix cached while requests wait), then
the real engine: a request that continues a finished request's prompt and an unrelated one arrive
together; your batches must be the grader's reference, and the tokens those of the base part.
"""),
    code('''
LPM_MAX_WAITING = 8  # more requests waiting than this: first come, first served


def schedule_next_batch_lpm(scheduler) -> Optional[Batch]:
    """schedule_next_batch, with the waiting requests not yet admitted considered longest cached prefix first."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    cache = scheduler.cache
    waiting = list(scheduler.waiting)
    started = [r for r in waiting if r.table_idx >= 0]  # part-way through a chunked prefill
    new = [r for r in waiting if r.table_idx < 0]
    if len(waiting) <= LPM_MAX_WAITING:
        new.sort(key=lambda r: len(cache.match(r)[1]), reverse=True)  # stable: ties keep arrival order
    items = []
    budget = scheduler.max_prefill_tokens
    for req in started + new:
        if budget <= 0:
            break
        if req.table_idx < 0 and not try_admit(scheduler, req):
            break  # nobody overtakes the first one (in this order) that does not fit
        chunk = min(req.remaining_prompt, budget)
        cache.reserve(req, req.cached_len + chunk)
        items.append(ScheduledReq(req, req.cached_len, chunk))
        req.status = ReqStatus.PREFILLING
        budget -= chunk
    if items:
        return Batch("prefill", items)
    for req in scheduler.running:
        cache.reserve(req, req.total_len)
        items.append(ScheduledReq(req, req.total_len - 1, 1))
    return Batch("decode", items) if items else None
    ### END SOLUTION
'''),
    code("""
result_stretch = check("schedule_lpm", schedule_next_batch_lpm)
"""),
    md("""
## Going further

* Reserving every request's worst case up front wastes pages when most answers are short. What
  would the scheduler need to do if it admitted more optimistically and a running request then ran
  out of pages? (SGLang retracts a running request back to the queue.)
* With a budget of 2048 tokens, how long can one step's prefill hold up the decoding requests on
  your laptop? Time a step in chapter 04 and work it out.
"""),
]
