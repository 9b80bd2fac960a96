"""Exercise 2 — abort: `abort_request(scheduler, uid) -> bool`.

The scheduler calls it for an `AbortBackendMsg` (`Scheduler.abort_fn`). Each case aborts a
request of the real engine at a different moment: waiting, part-way through a chunked prefill,
decoding, between `schedule()` and `run_batch()` (the chapter-04 stepper and the overlap loop
abort there), while its batch is in flight on the overlap loop (decoding, or its prompt's last
chunk), and after its prompt reused a cached prefix. The edges: a prefix that other running
requests still hold (exact free and evictable counts), computed tokens ending exactly at a page
boundary or one token past it (with and without a page already reserved for the next step), two aborts in both orders, an abort after
many requests filled the cache and forced an eviction, and the same uid aborted twice. After each
it checks that the request is gone everywhere and marked finished, that the detokenizer was told,
and that every page and table row is back where it belongs (the free list, or the prefix cache for
shared pages). Each failed assertion says what was left behind and ends with a hint for that
assertion; the case's own hint only says what situation the case plays.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.abort.batch_kept import batch_in_flight, check_batch_kept
from minisgl_edu.grading.abort.checks import (
    FILLERS,
    GREEDY,
    LONG,
    OTHER,
    SHORT,
    WITH_STOP,
    abort,
    abort_again,
    check_all_back,
    check_freed,
    check_gone,
    check_marked,
    check_marked_where,
    check_memory,
    check_message,
    check_nothing_back_early,
    check_other_intact,
    check_own_pages,
    check_release_asked,
    check_waiting_released,
    engine_step,
    run_scheduled,
    snapshot,
    start,
)
from minisgl_edu.grading.abort.followers import case_leader_with_followers
from minisgl_edu.grading.abort.last_chunk import last_chunk_in_flight
from minisgl_edu.grading.abort.queue_order import check_waiting_order
from minisgl_edu.grading.abort.release_seen import changed_after_asked
from minisgl_edu.grading.abort.scenes import abort_case
from minisgl_edu.grading.abort.unknown_uid import case_unknown_uid
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.fixtures import held, step_until
from minisgl_edu.grading.harness import encode, fail_fast_if_stub, new_scheduler, remember
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request as reference


def _abort_at(fn, stage: str) -> None:
    s = start(fn, max_prefill_tokens=16)
    free0, cached0 = snapshot(s)
    prompt = SHORT if stage == "decoding" else LONG
    s.add_request(0, encode(s, prompt), WITH_STOP)
    req = s.reqs[0]
    if stage == "mid_chunk":
        s.step()
        assert 0 < req.cached_len < len(req.input_ids), "setup: expected a chunked prefill"
    elif stage == "decoding":
        step_until(s, lambda: req.output_ids, "the request's first token")
        s.step()
    s.io.drain()  # its tokens so far
    row, free_before = req.table_idx, s.cache.num_free
    abort(s, 0)
    check_gone(s, 0)
    if stage != "decoding":
        check_marked_where(req, "while waiting" if stage == "waiting" else "part-way through its chunked prefill")
    check_message(s.io.drain(), 0, list(WITH_STOP.stop))
    if stage == "mid_chunk":
        check_waiting_released(s, row, free_before)
    check_memory(s, row, free0, cached0)
    assert engine_step("the next step()", s.step) is None and s.is_idle, "the scheduler should have nothing left to do"


def case_waiting(fn):
    _abort_at(fn, "waiting")
    check_waiting_order(fn)


def case_mid_chunk(fn):
    _abort_at(fn, "mid_chunk")


def case_decoding(fn):
    _abort_at(fn, "decoding")


def _two_decoding(s: Scheduler):
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    step_until(s, lambda: all(s.reqs[u].output_ids for u in (0, 1)), "both requests decoding")
    return s.reqs[0], s.reqs[1]


def case_between_schedule_and_run(fn):
    s = start(fn, cache="naive")
    req, other = _two_decoding(s)
    s.io.drain()
    batch = s.schedule()  # what the stepper shows as "about to run"
    assert batch is not None and req in batch.reqs, "setup: the next batch should decode request 0"
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    abort(s, 0)
    check_gone(s, 0)
    run_scheduled(s, batch, req)
    check_marked(req)
    check_own_pages(s, row, pages)
    msgs = s.io.drain()
    check_message(msgs, 0)
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], "the aborted request still got a token"
    engine_step("running the other request to the end", s.run_until_idle)
    check_all_back(s)
    # one prefill batch admits two requests: both hold rows and are still in scheduler.waiting
    s = start(fn, cache="naive")
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    batch, first, second = s.schedule(), s.reqs[0], s.reqs[1]
    assert batch is not None and len(batch.reqs) == 2 and second.table_idx >= 0, "setup: both admitted"
    assert list(s.waiting) == [first, second], "setup: both admitted requests still wait for run_batch()"
    kept = list(s.cache.page_table.pages[first.table_idx])
    abort(s, 1)
    check_gone(s, 1)
    check_other_intact(s, 0, "waiting", kept)
    run_scheduled(s, batch, second)
    engine_step("running the other request to the end", s.run_until_idle)
    check_all_back(s)


def case_in_flight(fn):
    s = start(fn, cache="naive")
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    req = s.reqs[0]
    while not (s.has_in_flight and req in s.in_flight_batch.reqs and req.output_ids):
        s.overlap_step()
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    s.io.drain()
    deferred, batch = s.cache.num_deferred, batch_in_flight(s)
    abort(s, 0)
    check_gone(s, 0)
    check_marked(req)
    check_batch_kept(s, batch)
    check_release_asked(s, row, deferred)
    check_nothing_back_early(s, pages, deferred)
    mistake = changed_after_asked(s, req)  # a field the waiting release reads, changed after asking
    if mistake is not None:
        raise mistake
    engine_step("the next overlap step", s.overlap_step)  # the batch lands; deferred releases happen
    check_own_pages(s, row, pages)
    engine_step("the overlap loop", lambda: s.run_until_idle(overlap=True))
    msgs = s.io.drain()
    check_message(msgs, 0)
    tokens_after = [m for m in msgs if m.uid == 0 and m.next_token >= 0]
    assert not tokens_after, "the aborted request still got a token from the batch that was in flight"
    check_all_back(s)
    last_chunk_in_flight(fn)  # a prompt whose last chunk is in flight: no prompt left, still waiting


def case_shared_prefix(fn):
    s = start(fn, cache="radix")
    ids = encode(s, LONG)
    s.add_request(0, ids, SamplingParams(max_tokens=2, ignore_eos=True))
    engine_step("the first request", s.run_until_idle)
    s.io.drain()
    free0, cached0 = snapshot(s)
    assert cached0, "setup: the first request's pages should be in the prefix cache"
    s.add_request(1, ids, GREEDY)  # the same prompt: all but its last page comes from the cache
    req = s.reqs[1]
    step_until(s, lambda: req.output_ids, "the request decoding")
    assert req.prefix_len > 0, "setup: the second request should reuse the cached prefix"
    row = req.table_idx
    abort(s, 1)
    check_gone(s, 1)
    check_message(s.io.drain(), 1)
    check_memory(s, row, free0, cached0)


def _cached_then_two(s: Scheduler, a: int, b: int, sp_b: SamplingParams = GREEDY) -> list[int]:
    """Request 0 leaves LONG's prompt in the prefix cache; `a` and `b` come with the same prompt
    (both admitted with the cached prefix, both locking it) and decode."""
    ids = encode(s, LONG)
    s.add_request(0, ids, SamplingParams(max_tokens=2, ignore_eos=True))
    engine_step("the first request", s.run_until_idle)
    s.add_request(a, ids, GREEDY)
    s.add_request(b, ids, sp_b)
    step_until(s, lambda: all(s.reqs[u].output_ids for u in (a, b)), "both requests decoding")
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
    s = start(fn, cache="radix")
    _cached_then_two(s, 1, 2)
    h = held(s, 1)
    abort(s, 1)
    check_gone(s, 1)
    check_message(s.io.drain(), 1)
    check_freed(s, h, others="request 2 (same prompt, still decoding)")
    assert 2 in s.reqs and s.reqs[2] in s.running, "request 2 (still decoding) left the running set"
    engine_step("request 2, which shares the prefix", s.run_until_idle)
    got = [m.next_token for m in s.io.drain() if m.uid == 2 and m.next_token >= 0]
    want = remember("abort: shared held", lambda: _shared_then_finish(reference))
    assert got == want, (
        "request 2, which shares the aborted request's cached prefix, got different tokens after the abort: its "
        "prefix pages were freed or overwritten while it read them"
    )
    check_all_back(s)
    # n=2: the first answer hands its prompt's full pages to the cache; its second answer reads them.
    s.add_request(3, encode(s, OTHER), GREEDY)
    s.add_request(4, encode(s, OTHER), GREEDY, prompt_leader=3)
    step_until(s, lambda: all(s.reqs[u].output_ids for u in (3, 4)), "both answers decoding")
    assert s.reqs[3].shared_len > s.reqs[3].prefix_len, "setup: the first answer should share its prompt's pages"
    s.io.drain()
    h = held(s, 3)
    only_its = h.own_from - s.reqs[4].prefix_len // s.cache.page_size  # prompt pages only it locks
    abort(s, 3)
    check_gone(s, 3)
    check_message(s.io.drain(), 3)
    second = "request 4 (the second answer to the same prompt, still decoding)"
    check_freed(s, h, others=second, evictable=h.evictable + max(only_its, 0), leader=True)
    engine_step("request 4, the second answer", s.run_until_idle)
    check_all_back(s)


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


def case_both_orders(fn):
    for first, second in ((0, 1), (1, 0)):
        order = f"uid {first}, then uid {second}"
        # A request part-way through its chunked prefill and one queued behind it.
        s = start(fn, max_prefill_tokens=16)
        free0, cached0 = snapshot(s)
        _pair_in_queue(s)
        for uid, other in ((first, second), (second, None)):
            kept = (
                list(s.cache.page_table.pages[s.reqs[other].table_idx])
                if other is not None and s.reqs[other].table_idx >= 0
                else []
            )
            h = held(s, uid)
            abort(s, uid)
            check_gone(s, uid)
            check_message(s.io.drain(), uid)
            if uid == 0:  # part-way through its chunked prefill
                check_waiting_released(s, h.row_idx, h.free)
            if other is not None:
                check_other_intact(s, other, "waiting", kept)
            check_freed(s, h)
        assert s.cache.num_free == free0 and s.cache.prefix_cache.cached_pages() == cached0, (
            f"aborting two queued requests ({order}) did not bring the pages back to where they were"
        )
        assert engine_step("the next step()", s.step) is None and s.is_idle, (
            f"after aborting both queued requests ({order}) the scheduler should have nothing left to do"
        )
        # Two decoding requests that read the same cached prefix.
        s = start(fn, cache="radix")
        _cached_then_two(s, 1, 2)
        a, b = first + 1, second + 1
        h, kept = held(s, a), held(s, b).row
        abort(s, a)
        check_gone(s, a)
        check_message(s.io.drain(), a)
        check_other_intact(s, b, "running", kept)
        check_freed(s, h, others=f"request {b} (same prompt, still decoding)")
        h = held(s, b)
        abort(s, b)
        check_gone(s, b)
        check_message(s.io.drain(), b)
        check_freed(s, h)
        check_all_back(s)


def _at_offset(fn, offset: int, scheduled: bool) -> None:
    s = start(fn)
    ps = s.cache.page_size
    free0, _ = snapshot(s)
    ids = encode(s, SHORT)
    assert len(ids) % ps, "setup: the prompt's length should not be a multiple of the page size"
    s.add_request(0, ids, SamplingParams(max_tokens=2 * ps + 4, ignore_eos=True))
    req = s.reqs[0]
    step_until(s, lambda: req.output_ids and req.cached_len % ps == offset, "the request decoding")
    batch = s.schedule() if scheduled else None
    if scheduled:
        assert batch is not None and req in batch.reqs, "setup: the next batch should decode the request"
    s.io.drain()
    h = held(s, 0)
    abort(s, 0)
    check_gone(s, 0)
    if batch is not None:
        run_scheduled(s, batch, req)
        check_marked(req)
    msgs = s.io.drain()
    check_message(msgs, 0)
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], "the aborted request still got a token"
    check_freed(s, h)
    assert s.cache.num_free == free0, f"{free0 - s.cache.num_free} page(s) are missing after the abort"
    assert engine_step("the next step()", s.step) is None and s.is_idle, "the scheduler should have nothing left to do"


def case_page_boundary(fn):
    for offset in (0, 1):  # computed tokens end exactly at a page's end; one token past it
        for scheduled in (False, True):  # between two steps; after schedule(), before run_batch()
            _at_offset(fn, offset, scheduled)


BALLAST = 224  # of the 256 pages: locked in the prefix cache, so the requests share 32


def case_many_requests(fn):
    s = start(fn, cache="radix")
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
    engine_step("eight short requests", s.run_until_idle)
    base = encode(s, LONG)
    s.add_request(0, base, SamplingParams(max_tokens=2, ignore_eos=True))
    engine_step("a request with the long prompt", s.run_until_idle)
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
    h = held(s, 1)
    abort(s, 1)
    check_gone(s, 1)
    check_message(s.io.drain(), 1)
    check_freed(s, h, evictable=len(tree.cached_pages()) - BALLAST)
    tree.unlock(pin)
    check_all_back(s)
    want = len(tree.match_prefix(longer[:-1])[1]) * s.cache.page_size
    s.add_request(3, longer, SamplingParams(max_tokens=1))
    again = s.reqs[3]
    engine_step("a new request with the same prompt", s.run_until_idle)
    assert again.prefix_len == want, (
        f"a new request with the aborted request's prompt reused {again.prefix_len} cached tokens, expected {want}: "
        "the abort changed what the prefix cache holds"
    )


def case_twice(fn):
    s = start(fn, cache="radix")
    s.add_request(0, encode(s, LONG), GREEDY)  # decoding, normal loop
    s.add_request(1, encode(s, SHORT), GREEDY)
    s.add_request(2, encode(s, OTHER), GREEDY)  # stays waiting: aborted before it is admitted
    req = s.reqs[0]
    step_until(s, lambda: req.output_ids, "the request decoding")
    assert 2 in s.reqs, "setup"
    s.io.drain()
    for uid, when in ((0, "decoding"), (2, "while waiting")):
        r = s.reqs[uid]
        abort(s, uid)
        check_message(s.io.drain(), uid)
        abort_again(s, uid, r, f"aborted {when}")
    engine_step("the other request", s.run_until_idle)
    check_all_back(s)
    # On the overlap loop: the first abort's release waits for the batch in flight.
    s = start(fn, cache="radix")
    for uid in (0, 1):
        s.add_request(uid, encode(s, SHORT), GREEDY)
    req = s.reqs[0]
    while not (s.has_in_flight and req in s.in_flight_batch.reqs and req.output_ids):
        s.overlap_step()
    s.io.drain()
    abort(s, 0)
    check_message(s.io.drain(), 0)
    abort_again(s, 0, req, "while its batch is in flight")
    engine_step("the overlap loop", lambda: s.run_until_idle(overlap=True))
    s.io.drain()
    check_all_back(s)


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
    got, s = engine_step("the other two requests", lambda: _three_with_abort(fn))
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
        "on the overlap loop a batch with the request is being computed when the abort arrives (the request "
        "decoding, then a request whose prompt's last chunk is in flight)",
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
        "two requests with the same prompt read the same cached prefix; one is aborted, the other decodes on; "
        "then the first of n=2 answers to one prompt is aborted while the second decodes",
        engine=True,
    ),
    Case(
        "abort the first of n answers while the others wait",
        case_leader_with_followers,
        "answers 3 and 4 to one prompt (4 waits for 3's prompt to be computed) and request 5; 3 is aborted at once",
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
    abort_case(reference),
]
SYMBOL = "abort_request"
SOLUTION = reference
