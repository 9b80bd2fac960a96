"""Exercise 2 — abort: `abort_request(scheduler, uid) -> bool`.

The scheduler calls it for an `AbortBackendMsg` (`Scheduler.abort_fn`). Each case aborts a
request of the real engine at a different moment: waiting, part-way through a chunked prefill,
decoding, between `schedule()` and `run_batch()` (the chapter-04 stepper and the overlap loop
abort there), while its batch is in flight on the overlap loop, and after its prompt reused a
cached prefix. The edges: a prefix that other running requests still hold (exact free and
evictable counts), computed tokens ending exactly at a page boundary or one token past it (with
and without a page already reserved for the next step), two aborts in both orders, an abort after
many requests filled the cache and forced an eviction, and the same uid aborted twice. After each
it checks that the request is gone everywhere and marked finished, that the detokenizer was told,
and that every page and table row is back where it belongs (the free list, or the prefix cache for
shared pages). Each failed assertion says what was left behind and ends with a hint for that
assertion; the case's own hint only says what situation the case plays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from minisgl_edu.core import ReqStatus, SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import encode, fail_fast_if_stub, new_scheduler, remember
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request as reference

LONG = [{"role": "user", "content": "Tell me a long story about a cat, a dog and a very old lighthouse by the sea."}]
SHORT = [{"role": "user", "content": "Say hello."}]
OTHER = [{"role": "user", "content": "Name three rivers and the seas they flow into."}]
GREEDY = SamplingParams(max_tokens=8, ignore_eos=True)
FILLERS = [
    "Name three rivers.",
    "Why is the sky blue?",
    "Count to five.",
    "What is a cat?",
    "Say goodbye.",
    "Name a colour.",
    "What is rain?",
    "Spell the word tree.",
]

RELEASE_HINT = (
    "the cache manager's release(req, ...) gives back exactly what the request holds: its own pages, "
    "its row, and its hold on a cached prefix (once), and it waits for a batch in flight"
)


def _scheduler(fn, **overrides) -> Scheduler:
    fail_fast_if_stub(fn, 0)  # an untouched stub fails before the model is loaded
    s = new_scheduler(**overrides)
    s.abort_fn = fn
    return s


def _engine(what: str, run: Callable[[], object]):
    """Run engine work after the student's abort; a crash there is reported as the engine's."""
    try:
        return run()
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"after your abort, {what} failed ({type(e).__name__}: {e})") from e


def _abort(s: Scheduler, uid: int) -> None:
    got = s.abort(uid)
    assert got is True, (
        f"aborting a live request (uid {uid}) must return True; your function returned {got!r}. Hint: a uid is "
        "live while it is a key of scheduler.reqs"
    )


def _check_message(msgs, uid: int) -> None:
    mine = [m for m in msgs if m.uid == uid]
    assert mine, (
        f"the detokenizer got no message for the aborted request (uid {uid}), so it and the API server keep its "
        "state forever. Hint: send DetokenizeMsg(uid, -1, True, 'abort', stop) with scheduler.io.send([...]), "
        "stop being the request's stop strings (req.sampling_params.stop)"
    )
    last = mine[-1]
    assert last.finished, "the message to the detokenizer must have finished=True, or it waits for more tokens forever"
    assert last.finish_reason == "abort", f"the message's finish_reason is {last.finish_reason!r}, expected 'abort'"
    assert last.next_token < 0, (
        f"the abort message carries next_token={last.next_token}: use -1, a real id would "
        "be detokenized and shown to the client"
    )
    assert len([m for m in mine if m.finished]) == 1, (
        "the detokenizer got more than one finished message for the request"
    )


def _check_gone(s: Scheduler, uid: int) -> None:
    assert uid not in s.reqs, (
        f"the request (uid {uid}) is still in scheduler.reqs: the scheduler still counts it as live, and a "
        "second abort would free it again. Hint: pop it from scheduler.reqs"
    )
    assert all(r.uid != uid for r in s.waiting), (
        f"the request (uid {uid}) is still in the waiting queue (scheduler.waiting). Hint: a waiting request, "
        "admitted or not, is somewhere in that deque, not necessarily the head: remove that request itself"
    )
    assert all(r.uid != uid for r in s.running), (
        f"the request (uid {uid}) is still in the running set (scheduler.running). Hint: remove that request "
        "itself from the list"
    )


def _check_marked(req) -> None:
    assert req.status == ReqStatus.FINISHED, (
        f"the request is not marked finished (req.status is {req.status}): a batch scheduled before the "
        "abort still holds it, and the engine runs it with its pages gone. Hint: set "
        "req.status = ReqStatus.FINISHED; run_batch() and the overlap loop skip finished requests"
    )
    assert req.finish_reason == "abort", f"req.finish_reason is {req.finish_reason!r}, expected 'abort'"


def _check_memory(s: Scheduler, row: int, free0: int, cached0: set[int]) -> None:
    """Alone in the scheduler: pages and rows back where they were before the request came."""
    cache = s.cache
    _check_row(s, row)
    cached = cache.prefix_cache.cached_pages()
    lost = cached0 - cached
    assert not lost, (
        f"{len(lost)} page(s) of the prefix cache were taken out of it. Hint: pages the request shares with "
        f"the prefix cache stay there; {RELEASE_HINT}"
    )
    new_cached = cached - cached0
    assert not new_cached, (
        f"{len(new_cached)} of the request's pages went into the prefix cache: this engine does not "
        "cache an aborted request. Hint: release(req, cache_it=False)"
    )
    _check_shared_not_freed(s)
    assert cache.num_free <= free0, (
        f"{cache.num_free - free0} page(s) too many are free: was a page freed twice? Hint: {RELEASE_HINT}"
    )
    assert cache.num_free == free0, (
        f"{free0 - cache.num_free} page(s) were not given back to the free list. Hint: a request part-way "
        f"through a chunked prefill holds pages too; {RELEASE_HINT}"
    )
    assert cache.prefix_cache.num_evictable == len(cached), (
        f"the cached prefix the request was using is still locked, so it can never be evicted. Hint: {RELEASE_HINT}"
    )
    _check_consistent(s)


def _check_row(s: Scheduler, row: int) -> None:
    """`row` is the request's page-table row before the abort (-1: it had none)."""
    assert row < 0 or row not in s.cache.page_table.used_rows(), (
        f"the request's page-table row ({row}) was not given back. Hint: {RELEASE_HINT}"
    )


def _check_shared_not_freed(s: Scheduler) -> None:
    cache = s.cache
    freed_shared = {p for p in cache.prefix_cache.cached_pages() if cache.allocator.is_free(p)}
    assert not freed_shared, (
        f"{len(freed_shared)} page(s) that belong to the prefix cache (shared with every request "
        "with the same prompt start) were put on the free list. Hint: only release() knows which "
        "pages of the row are the request's own"
    )


def _check_own_pages(s: Scheduler, row: int, pages: list[int]) -> None:
    """Others still run: the aborted request's own pages are free now, and none went to the cache."""
    _check_row(s, row)
    cached = s.cache.prefix_cache.cached_pages()
    into_cache = [p for p in pages if p in cached]
    assert not into_cache, (
        f"{len(into_cache)} of the request's pages went into the prefix cache: this engine does not "
        "cache an aborted request. Hint: release(req, cache_it=False)"
    )
    kept = [p for p in pages if not s.cache.allocator.is_free(p)]
    assert not kept, (
        f"{len(kept)} of the request's {len(pages)} page(s) were not given back to the free list. Hint: {RELEASE_HINT}"
    )
    _check_shared_not_freed(s)


def _check_all_back(s: Scheduler) -> None:
    """Every request is over: every page is free or cached (and unlocked), every row is free."""
    cache = s.cache
    assert not cache.page_table.used_rows(), "a page-table row is still in use after every request ended"
    _check_shared_not_freed(s)
    missing = cache.num_pages - cache.num_available
    assert missing <= 0, f"{missing} page(s) are neither free nor evictable after every request ended"
    _check_consistent(s)


def _check_consistent(s: Scheduler) -> None:
    try:
        s.cache.check()
    except AssertionError as e:
        raise AssertionError(f"the cache's bookkeeping is inconsistent after your abort: {e}") from None


def _snapshot(s: Scheduler):
    return s.cache.num_free, set(s.cache.prefix_cache.cached_pages())


@dataclass
class Held:
    """What a live request holds just before its abort, and the cache around it."""

    uid: int
    row_idx: int
    row: list[int]
    own_from: int  # row pages before this index are the prefix cache's (its prefix hit)
    cached_len: int
    free: int
    cached: set[int]
    evictable: int

    @property
    def own(self) -> list[int]:
        return self.row[self.own_from :]

    @property
    def shared(self) -> list[int]:
        return self.row[: self.own_from]


def _held(s: Scheduler, uid: int) -> Held:
    req, cache = s.reqs[uid], s.cache
    row = list(cache.page_table.pages[req.table_idx]) if req.table_idx >= 0 else []
    return Held(
        uid,
        req.table_idx,
        row,
        max(req.prefix_len, req.shared_len) // cache.page_size,
        req.cached_len,
        cache.num_free,
        set(cache.prefix_cache.cached_pages()),
        cache.prefix_cache.num_evictable,
    )


def _check_freed(s: Scheduler, h: Held, others: str = "", evictable: int | None = None) -> None:
    """After the abort of `h.uid` (its batch landed, if any): exactly its own pages are free again,
    its row is free, the cache kept its pages, and the locks of the prefix are what `others`
    (the requests still reading it, in words; "" for none) leave. `evictable`: the expected
    num_evictable (default: unchanged when others hold the prefix, every cached page when not)."""
    cache = s.cache
    uid, ps = h.uid, cache.page_size
    _check_row(s, h.row_idx)
    cached = cache.prefix_cache.cached_pages()
    lost = h.cached - cached
    assert not lost, (
        f"after the abort of uid {uid}, {len(lost)} page(s) left the prefix cache ({sorted(lost)}): the cache "
        f"keeps its pages when a request that read them is aborted. Hint: {RELEASE_HINT}"
    )
    went_in = [p for p in h.own if p in cached]
    assert not went_in, (
        f"{len(went_in)} of uid {uid}'s own pages went into the prefix cache: this engine does not cache an "
        "aborted request. Hint: release(req, cache_it=False)"
    )
    freed_shared = [p for p in h.shared if cache.allocator.is_free(p)]
    assert not freed_shared, (
        f"uid {uid}'s first {len(h.shared)} page(s) were its prefix hit, pages of the prefix cache"
        + (f" that {others} still reads" if others else "")
        + f"; {len(freed_shared)} of them ({freed_shared}) were put on the free list. Hint: only the pages after "
        "the prefix a request was admitted with are its own"
    )
    kept = [p for p in h.own if not cache.allocator.is_free(p)]
    if kept:
        where = ""
        if h.cached_len % ps == 0 and len(h.row) * ps > h.cached_len:
            where = (
                f" Its computed tokens ({h.cached_len}) end exactly at a page boundary (pages of {ps}), and "
                f"schedule() had already reserved page {h.row[-1]} for the token the next step computes: that "
                "page is in its row too, and the request's to give back."
            )
        raise AssertionError(
            f"{len(kept)} of uid {uid}'s {len(h.own)} own page(s) ({kept}) were not given back to the free list "
            f"(its row held {len(h.row)} page(s), the first {len(h.shared)} being its prefix hit).{where} Hint: "
            "its own pages are every page of its row after the prefix it was admitted with (req.prefix_len "
            "tokens); the prefix cache may hold more of its prompt by now, on other pages. " + RELEASE_HINT
        )
    want_free = h.free + len(h.own)
    assert cache.num_free == want_free, (
        f"after the abort of uid {uid}, {cache.num_free} pages are free; expected exactly {want_free} ({h.free} "
        f"before it plus its {len(h.own)} own page(s)): {'too many: was a page freed twice?' if cache.num_free > want_free else 'some pages were lost'}"
        f" Hint: {RELEASE_HINT}"
    )
    if evictable is None:
        evictable = h.evictable if others else len(cached)
    got = cache.prefix_cache.num_evictable
    if others:
        assert got <= evictable, (
            f"the prefix pages that {others} still reads became evictable ({got} evictable pages, expected "
            f"{evictable}): the cache may now evict K/V a running request reads. Hint: a lock counts the "
            "requests reading a prefix; the aborted request gives up its own hold, once, and the others' stay"
        )
    assert got >= evictable, (
        f"{evictable - got} cached page(s) are still locked after the abort of uid {uid}, so they can never be "
        f"evicted. Hint: {RELEASE_HINT}"
    )
    assert got == evictable, f"{got} pages are evictable after the abort of uid {uid}, expected {evictable}"
    _check_consistent(s)


def _abort_at(fn, stage: str) -> None:
    s = _scheduler(fn, max_prefill_tokens=16)
    free0, cached0 = _snapshot(s)
    prompt = SHORT if stage == "decoding" else LONG
    s.add_request(0, encode(s, prompt), GREEDY)
    req = s.reqs[0]
    if stage == "mid_chunk":
        s.step()
        assert 0 < req.cached_len < len(req.input_ids), "setup: expected a chunked prefill"
    elif stage == "decoding":
        while not req.output_ids:
            s.step()
        s.step()
    s.io.drain()  # its tokens so far
    row = req.table_idx
    _abort(s, 0)
    _check_gone(s, 0)
    _check_message(s.io.drain(), 0)
    _check_memory(s, row, free0, cached0)
    assert _engine("the next step()", s.step) is None and s.is_idle, "the scheduler should have nothing left to do"


def case_waiting(fn):
    _abort_at(fn, "waiting")


def case_mid_chunk(fn):
    _abort_at(fn, "mid_chunk")


def case_decoding(fn):
    _abort_at(fn, "decoding")


def _two_decoding(s: Scheduler):
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    while not all(s.reqs[u].output_ids for u in (0, 1)):
        s.step()
    return s.reqs[0], s.reqs[1]


def _run_scheduled(s: Scheduler, batch, req) -> None:
    """Run the batch that was scheduled before the abort of `req`."""
    try:
        s.run_batch(batch)
    except Exception as e:
        if req.status != ReqStatus.FINISHED:
            raise AssertionError(
                f"run_batch() crashed ({type(e).__name__}: {e}) on the batch scheduled before your abort: it still "
                f"holds the request, which is not marked finished (req.status is {req.status}), so the engine ran it "
                "with its pages already freed. Hint: set req.status = ReqStatus.FINISHED"
            ) from None
        raise AssertionError(f"run_batch() crashed after your abort ({type(e).__name__}: {e})") from None


def case_between_schedule_and_run(fn):
    s = _scheduler(fn, cache="naive")
    req, other = _two_decoding(s)
    s.io.drain()
    batch = s.schedule()  # what the stepper shows as "about to run"
    assert batch is not None and req in batch.reqs, "setup: the next batch should decode request 0"
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    _abort(s, 0)
    _check_gone(s, 0)
    _run_scheduled(s, batch, req)
    _check_marked(req)
    _check_own_pages(s, row, pages)
    msgs = s.io.drain()
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], "the aborted request still got a token"
    _check_message(msgs, 0)
    _engine("running the other request to the end", s.run_until_idle)
    _check_all_back(s)


def case_in_flight(fn):
    s = _scheduler(fn, cache="naive")
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    req = s.reqs[0]
    while not (s.has_in_flight and req in s._in_flight.batch.reqs and req.output_ids):
        s.overlap_step()
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    s.io.drain()
    _abort(s, 0)
    _check_gone(s, 0)
    _check_marked(req)
    early = [p for p in pages if s.cache.allocator.is_free(p)]
    assert not early, (
        f"{len(early)} page(s) went back to the free list while the request's batch is still in flight: "
        "the GPU may still write them. Hint: scheduler.cache.release() waits for the batch to land"
    )
    _engine("the next overlap step", s.overlap_step)  # the batch lands; deferred releases happen
    _check_own_pages(s, row, pages)
    _engine("the overlap loop", lambda: s.run_until_idle(overlap=True))
    msgs = s.io.drain()
    _check_message(msgs, 0)
    tokens_after = [m for m in msgs if m.uid == 0 and m.next_token >= 0]
    assert not tokens_after, "the aborted request still got a token from the batch that was in flight"
    _check_all_back(s)


def case_shared_prefix(fn):
    s = _scheduler(fn, cache="radix")
    ids = encode(s, LONG)
    s.add_request(0, ids, SamplingParams(max_tokens=2, ignore_eos=True))
    _engine("the first request", s.run_until_idle)
    s.io.drain()
    free0, cached0 = _snapshot(s)
    assert cached0, "setup: the first request's pages should be in the prefix cache"
    s.add_request(1, ids, GREEDY)  # the same prompt: all but its last page comes from the cache
    req = s.reqs[1]
    while not req.output_ids:
        s.step()
    assert req.prefix_len > 0, "setup: the second request should reuse the cached prefix"
    row = req.table_idx
    _abort(s, 1)
    _check_gone(s, 1)
    _check_message(s.io.drain(), 1)
    _check_memory(s, row, free0, cached0)


def _cached_then_two(s: Scheduler, a: int, b: int, sp_b: SamplingParams = GREEDY) -> list[int]:
    """Request 0 leaves LONG's prompt in the prefix cache; `a` and `b` come with the same prompt
    (both admitted with the cached prefix, both locking it) and decode."""
    ids = encode(s, LONG)
    s.add_request(0, ids, SamplingParams(max_tokens=2, ignore_eos=True))
    _engine("the first request", s.run_until_idle)
    s.add_request(a, ids, GREEDY)
    s.add_request(b, ids, sp_b)
    while not all(s.reqs[u].output_ids for u in (a, b)):
        s.step()
    ra, rb = s.reqs[a], s.reqs[b]
    assert ra.prefix_len > 0 and rb.prefix_len == ra.prefix_len, "setup: both should reuse the cached prefix"
    s.io.drain()
    return ids


def _shared_then_finish(abort_fn):
    s = new_scheduler(cache="radix")
    s.abort_fn = abort_fn
    _cached_then_two(s, 1, 2)
    s.abort(1)
    s.run_until_idle()
    return [m.next_token for m in s.io.drain() if m.uid == 2 and m.next_token >= 0]


def case_shared_held(fn):
    s = _scheduler(fn, cache="radix")
    _cached_then_two(s, 1, 2)
    h = _held(s, 1)
    _abort(s, 1)
    _check_gone(s, 1)
    _check_message(s.io.drain(), 1)
    _check_freed(s, h, others="request 2 (same prompt, still decoding)")
    assert 2 in s.reqs and s.reqs[2] in s.running, "request 2 (still decoding) left the running set"
    _engine("request 2, which shares the prefix", s.run_until_idle)
    got = [m.next_token for m in s.io.drain() if m.uid == 2 and m.next_token >= 0]
    want = remember("abort: shared held", lambda: _shared_then_finish(reference))
    assert got == want, (
        "request 2, which shares the aborted request's cached prefix, got different tokens after the abort: its "
        "prefix pages were freed or overwritten while it read them"
    )
    _check_all_back(s)


def _pair_in_queue(s: Scheduler) -> tuple[int, int]:
    """Request 0 part-way through its chunked prefill (head of the queue, holds pages), request 1
    behind it (holds nothing yet)."""
    s.add_request(0, encode(s, LONG), GREEDY)
    s.add_request(1, encode(s, OTHER), GREEDY)
    s.step()
    r0, r1 = s.reqs[0], s.reqs[1]
    assert 0 < r0.cached_len < len(r0.input_ids) and r1.table_idx < 0, "setup: 0 mid-prefill, 1 not admitted yet"
    s.io.drain()
    return 0, 1


def _check_other_intact(s: Scheduler, uid: int, where: str, row: list[int]) -> None:
    req = s.reqs.get(uid)
    assert req is not None, f"request {uid} (not aborted) left scheduler.reqs"
    queue = s.waiting if where == "waiting" else s.running
    assert req in queue, (
        f"request {uid}, which was not aborted, is no longer in scheduler.{where}: the abort took out the wrong "
        f"request. Hint: the aborted request is not necessarily the head of the queue; remove that request itself"
    )
    now = list(s.cache.page_table.pages[req.table_idx]) if req.table_idx >= 0 else []
    assert now[: len(row)] == row, f"request {uid}, which was not aborted, lost pages of its row: {row} -> {now}"


def case_both_orders(fn):
    for first, second in ((0, 1), (1, 0)):
        order = f"uid {first}, then uid {second}"
        # A request part-way through its chunked prefill and one queued behind it.
        s = _scheduler(fn, max_prefill_tokens=16)
        free0, cached0 = _snapshot(s)
        _pair_in_queue(s)
        for uid, other in ((first, second), (second, None)):
            kept = (
                list(s.cache.page_table.pages[s.reqs[other].table_idx])
                if other is not None and s.reqs[other].table_idx >= 0
                else []
            )
            h = _held(s, uid)
            _abort(s, uid)
            _check_gone(s, uid)
            _check_message(s.io.drain(), uid)
            if other is not None:
                _check_other_intact(s, other, "waiting", kept)
            _check_freed(s, h)
        assert s.cache.num_free == free0 and s.cache.prefix_cache.cached_pages() == cached0, (
            f"aborting two queued requests ({order}) did not bring the pages back to where they were"
        )
        assert _engine("the next step()", s.step) is None and s.is_idle, (
            f"after aborting both queued requests ({order}) the scheduler should have nothing left to do"
        )
        # Two decoding requests that read the same cached prefix.
        s = _scheduler(fn, cache="radix")
        _cached_then_two(s, 1, 2)
        a, b = first + 1, second + 1
        h, kept = _held(s, a), _held(s, b).row
        _abort(s, a)
        _check_gone(s, a)
        _check_message(s.io.drain(), a)
        _check_other_intact(s, b, "running", kept)
        _check_freed(s, h, others=f"request {b} (same prompt, still decoding)")
        h = _held(s, b)
        _abort(s, b)
        _check_gone(s, b)
        _check_message(s.io.drain(), b)
        _check_freed(s, h)
        _check_all_back(s)


def _at_offset(fn, offset: int, scheduled: bool) -> None:
    s = _scheduler(fn)
    ps = s.cache.page_size
    free0, _ = _snapshot(s)
    ids = encode(s, SHORT)
    assert len(ids) % ps, "setup: the prompt's length should not be a multiple of the page size"
    s.add_request(0, ids, SamplingParams(max_tokens=2 * ps + 4, ignore_eos=True))
    req = s.reqs[0]
    while not (req.output_ids and req.cached_len % ps == offset):
        s.step()
    batch = s.schedule() if scheduled else None
    if scheduled:
        assert batch is not None and req in batch.reqs, "setup: the next batch should decode the request"
    s.io.drain()
    h = _held(s, 0)
    _abort(s, 0)
    _check_gone(s, 0)
    if batch is not None:
        _run_scheduled(s, batch, req)
        _check_marked(req)
    msgs = s.io.drain()
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], "the aborted request still got a token"
    _check_message(msgs, 0)
    _check_freed(s, h)
    assert s.cache.num_free == free0, f"{free0 - s.cache.num_free} page(s) are missing after the abort"
    assert _engine("the next step()", s.step) is None and s.is_idle, "the scheduler should have nothing left to do"


def case_page_boundary(fn):
    for offset in (0, 1):  # computed tokens end exactly at a page's end; one token past it
        for scheduled in (False, True):  # between two steps; after schedule(), before run_batch()
            _at_offset(fn, offset, scheduled)


BALLAST = 224  # of the 256 pages: locked in the prefix cache, so the requests share 32


def case_many_requests(fn):
    s = _scheduler(fn, cache="radix")
    tree = s.cache.prefix_cache
    ballast = [10**6 + i for i in range(BALLAST * s.cache.page_size)]  # never a real token
    tree.insert(ballast, s.cache.allocator.allocate(BALLAST))
    pin = tree.match_prefix(ballast)[0]
    tree.lock(pin)
    evicted: list[int] = []
    evict = tree.evict

    def counting(n: int) -> list[int]:
        got = evict(n)
        evicted.extend(got)
        return got

    tree.evict = counting
    for i, text in enumerate(FILLERS):
        s.add_request(
            100 + i, encode(s, [{"role": "user", "content": text}]), SamplingParams(max_tokens=6, ignore_eos=True)
        )
    _engine("eight short requests", s.run_until_idle)
    base = encode(s, LONG)
    s.add_request(0, base, SamplingParams(max_tokens=2, ignore_eos=True))
    _engine("a request with the long prompt", s.run_until_idle)
    longer = base + encode(s, SHORT)[-10:]  # the same conversation, ten tokens longer
    s.add_request(1, longer, SamplingParams(max_tokens=16, ignore_eos=True))
    s.add_request(2, longer, SamplingParams(max_tokens=2, ignore_eos=True))
    req = s.reqs[1]
    while 2 in s.reqs or not req.output_ids:
        s.step()
    assert evicted, "setup: the prefix cache should have evicted pages by now"
    assert req.prefix_len > 0 and req in s.running, "setup: request 1 should decode on a cached prefix"
    assert len(s.cache.match(req)[1]) * s.cache.page_size > req.prefix_len, (
        "setup: request 2 should have left more of the prompt in the cache than request 1 was admitted with"
    )
    s.io.drain()
    h = _held(s, 1)
    _abort(s, 1)
    _check_gone(s, 1)
    _check_message(s.io.drain(), 1)
    _check_freed(s, h, evictable=len(tree.cached_pages()) - BALLAST)
    tree.unlock(pin)
    _check_all_back(s)
    want = len(tree.match_prefix(longer[:-1])[1]) * s.cache.page_size
    s.add_request(3, longer, SamplingParams(max_tokens=1))
    again = s.reqs[3]
    _engine("a new request with the same prompt", s.run_until_idle)
    assert again.prefix_len == want, (
        f"a new request with the aborted request's prompt reused {again.prefix_len} cached tokens, expected {want}: "
        "the abort changed what the prefix cache holds"
    )


def _state(s: Scheduler, req) -> dict:
    cache = s.cache
    return {
        "free pages": cache.num_free,
        "cached pages": sorted(cache.prefix_cache.cached_pages()),
        "evictable pages": cache.prefix_cache.num_evictable,
        "rows in use": {r: list(cache.page_table.pages[r]) for r in cache.page_table.used_rows()},
        "waiting": [r.uid for r in s.waiting],
        "running": [r.uid for r in s.running],
        "live uids": sorted(s.reqs),
        "releases waiting for a batch": cache.num_deferred,
        "the request's status": (req.status, req.finish_reason),
    }


def _abort_again(s: Scheduler, uid: int, req, when: str) -> None:
    before = _state(s, req)
    got = s.abort(uid)
    assert got is False, (
        f"the second abort of uid {uid} ({when}) must return False; your function returned {got!r}. Hint: after "
        "the first abort the uid is no longer live"
    )
    assert not s.io.drain(), f"the second abort of uid {uid} ({when}) sent another message"
    after = _state(s, req)
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, (
        f"the second abort of uid {uid} ({when}) changed the scheduler's state: "
        + "; ".join(f"{k}: {before[k]} -> {after[k]}" for k in changed)
        + ". Hint: a uid that is not in scheduler.reqs is not yours to clean up any more; whatever the first "
        "abort started (a release waiting for a batch in flight) finishes on its own"
    )


def case_twice(fn):
    s = _scheduler(fn, cache="radix")
    s.add_request(0, encode(s, LONG), GREEDY)  # decoding, normal loop
    s.add_request(1, encode(s, SHORT), GREEDY)
    s.add_request(2, encode(s, OTHER), GREEDY)  # stays waiting: aborted before it is admitted
    req = s.reqs[0]
    while not req.output_ids:
        s.step()
    assert 2 in s.reqs, "setup"
    s.io.drain()
    for uid, when in ((0, "decoding"), (2, "while waiting")):
        r = s.reqs[uid]
        _abort(s, uid)
        _check_message(s.io.drain(), uid)
        _abort_again(s, uid, r, f"aborted {when}")
    _engine("the other request", s.run_until_idle)
    _check_all_back(s)
    # On the overlap loop: the first abort's release waits for the batch in flight.
    s = _scheduler(fn, cache="radix")
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    req = s.reqs[0]
    while not (s.has_in_flight and req in s._in_flight.batch.reqs and req.output_ids):
        s.overlap_step()
    s.io.drain()
    _abort(s, 0)
    _check_message(s.io.drain(), 0)
    _abort_again(s, 0, req, "while its batch is in flight")
    _engine("the overlap loop", lambda: s.run_until_idle(overlap=True))
    s.io.drain()
    _check_all_back(s)


def case_unknown_uid(fn):
    s = _scheduler(fn)
    got = s.abort(12345)
    assert got is False, (
        f"aborting a uid the scheduler never saw must return False; your function returned {got!r}. Hint: a uid "
        "is live while it is a key of scheduler.reqs"
    )
    assert not s.io.drain(), "no message may be sent for a uid the scheduler does not know"
    s.add_request(0, encode(s, SHORT), SamplingParams(max_tokens=1))
    _engine("a one-token request", s.run_until_idle)
    s.io.drain()
    got = s.abort(0)
    assert got is False, (
        f"request 0 already finished (a client often hangs up just then): abort must return False, "
        f"your function returned {got!r}. Hint: a finished request has left scheduler.reqs"
    )
    assert not s.io.drain(), "no message may be sent for a request that already finished (the client has its answer)"
    s.add_request(1, encode(s, SHORT), GREEDY)
    _abort(s, 1)
    s.io.drain()
    got = s.abort(1)
    assert got is False, f"the second abort of the same request must return False; your function returned {got!r}"
    assert not s.io.drain(), "a second abort of the same request sent another message"


def _three_with_abort(abort_fn):
    s = new_scheduler()
    s.abort_fn = abort_fn
    for uid in range(3):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    s.step()
    s.step()
    s.abort(1)
    s.run_until_idle()
    tokens: dict[int, list[int]] = {}
    for m in s.io.drain():
        if m.next_token >= 0:
            tokens.setdefault(m.uid, []).append(m.next_token)
    return tokens, s


def case_others_unharmed(fn):
    fail_fast_if_stub(fn, 0)
    got, s = _engine("the other two requests", lambda: _three_with_abort(fn))
    ref, _ = remember("abort: others", lambda: _three_with_abort(reference))
    for uid in (0, 2):
        assert got.get(uid) == ref[uid], (
            f"request {uid} was disturbed by aborting request 1 (different tokens). Hint: touch only the aborted "
            "request: its place in the queues and what its row holds"
        )
    assert s.cache.num_available == s.cache.num_pages, "pages are missing after all requests ended"


CASES = [
    Case("abort while waiting", case_waiting, "the request has not been admitted: it holds no row yet", engine=True),
    Case(
        "abort mid chunked prefill",
        case_mid_chunk,
        "part of its prompt has run: it is still in scheduler.waiting, with a row and pages",
        engine=True,
    ),
    Case(
        "abort while decoding", case_decoding, "the request is in scheduler.running, with a row and pages", engine=True
    ),
    Case(
        "abort between schedule() and run_batch()",
        case_between_schedule_and_run,
        "the next batch was chosen before the abort and still lists the request; then it runs",
        engine=True,
    ),
    Case(
        "abort while its batch is in flight",
        case_in_flight,
        "on the overlap loop a batch with the request is being computed when the abort arrives",
        engine=True,
    ),
    Case(
        "abort with a cached prefix",
        case_shared_prefix,
        "the request was admitted with a prefix an earlier request left in the prefix cache",
        engine=True,
    ),
    Case(
        "abort while others hold its cached prefix",
        case_shared_held,
        "two requests with the same prompt read the same cached prefix; one is aborted, the other decodes on",
        engine=True,
    ),
    Case(
        "abort at a page boundary and one token past it",
        case_page_boundary,
        "a 33-token prompt, pages of 4: aborted when its computed tokens fill their last page exactly and one "
        "token later, between two steps and after schedule() (before run_batch())",
        engine=True,
    ),
    Case(
        "two aborts in both orders",
        case_both_orders,
        "two queued requests (the head mid-prefill) and two decoding ones on one cached prefix, each pair aborted "
        "in both orders",
        engine=True,
    ),
    Case(
        "abort after many requests",
        case_many_requests,
        "a 32-page pool after ten requests (pages evicted), then a longer prompt on a cached prefix that another "
        "request extended in the cache while it ran",
        engine=True,
    ),
    Case(
        "the same uid aborted twice",
        case_twice,
        "a decoding request, a waiting one and (overlap loop) one whose batch is in flight, each aborted twice",
        engine=True,
    ),
    Case(
        "unknown or finished uid",
        case_unknown_uid,
        "a uid never seen, and one whose request finished a moment ago",
        engine=True,
    ),
    Case(
        "other requests unharmed", case_others_unharmed, "three requests decode; the middle one is aborted", engine=True
    ),
]
SYMBOL = "abort_request"
SOLUTION = reference
