"""Exercise 2 — abort: `abort_request(scheduler, uid) -> bool`.

The scheduler calls it for an `AbortBackendMsg` (`Scheduler.abort_fn`). Each case aborts a
request of the real engine at a different moment: waiting, part-way through a chunked prefill,
decoding, between `schedule()` and `run_batch()` (the chapter-04 stepper and the overlap loop
abort there), while its batch is in flight on the overlap loop, and after its prompt reused a
cached prefix. Then it checks that the request is gone everywhere and marked finished, that the
detokenizer was told, and that every page and table row is back where it belongs (the free list,
or the prefix cache for shared pages), with a separate message for each way to get it wrong.
"""

from __future__ import annotations

from typing import Callable

from minisgl_edu.core import ReqStatus, SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import encode, fail_fast_if_stub, new_scheduler, remember
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request as reference

LONG = [{"role": "user", "content": "Tell me a long story about a cat, a dog and a very old lighthouse by the sea."}]
SHORT = [{"role": "user", "content": "Say hello."}]
GREEDY = SamplingParams(max_tokens=8, ignore_eos=True)


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
    assert got is True, f"aborting a live request must return True; your function returned {got!r}"


def _check_message(msgs, uid: int) -> None:
    mine = [m for m in msgs if m.uid == uid]
    assert mine, (
        "the detokenizer got no message for the aborted request: send "
        "DetokenizeMsg(uid, -1, True, 'abort', stop) with scheduler.io.send([...])"
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
    assert uid not in s.reqs, "the request is still in scheduler.reqs"
    assert all(r.uid != uid for r in s.waiting), "the request is still in the waiting queue (scheduler.waiting)"
    assert all(r.uid != uid for r in s.running), "the request is still in the running set (scheduler.running)"


def _check_marked(req) -> None:
    assert req.status == ReqStatus.FINISHED, (
        f"the request is not marked finished (req.status is {req.status}): a batch scheduled before the "
        "abort still holds it, and the engine runs it with its pages gone; set req.status = ReqStatus.FINISHED"
    )
    assert req.finish_reason == "abort", f"req.finish_reason is {req.finish_reason!r}, expected 'abort'"


def _check_memory(s: Scheduler, row: int, free0: int, cached0: set[int]) -> None:
    """Alone in the scheduler: pages and rows back where they were before the request came."""
    cache = s.cache
    _check_row(s, row)
    cached = cache.prefix_cache.cached_pages()
    lost = cached0 - cached
    assert not lost, f"{len(lost)} page(s) of the prefix cache were taken out of it: leave shared pages to release()"
    new_cached = cached - cached0
    assert not new_cached, (
        f"{len(new_cached)} of the request's pages went into the prefix cache: this engine does not "
        "cache an aborted request, use release(req, cache_it=False)"
    )
    _check_shared_not_freed(s)
    assert cache.num_free <= free0, f"{cache.num_free - free0} page(s) too many are free: was a page freed twice?"
    assert cache.num_free == free0, f"{free0 - cache.num_free} page(s) were not given back to the free list"
    assert cache.prefix_cache.num_evictable == len(cached), (
        "the cached prefix the request was using is still locked, so it can never be evicted: "
        "release() unlocks it (prefix_cache.unlock(req.cache_handle))"
    )
    _check_consistent(s)


def _check_row(s: Scheduler, row: int) -> None:
    """`row` is the request's page-table row before the abort (-1: it had none)."""
    assert row < 0 or row not in s.cache.page_table.used_rows(), (
        "the request's page-table row was not given back: scheduler.cache.release(req, cache_it=False) frees it"
    )


def _check_shared_not_freed(s: Scheduler) -> None:
    cache = s.cache
    freed_shared = {p for p in cache.prefix_cache.cached_pages() if cache.allocator.is_free(p)}
    assert not freed_shared, (
        f"{len(freed_shared)} page(s) that belong to the prefix cache (shared with every request "
        "with the same prompt start) were put on the free list: only release() knows which "
        "pages are the request's own"
    )


def _check_own_pages(s: Scheduler, row: int, pages: list[int]) -> None:
    """Others still run: the aborted request's own pages are free now, and none went to the cache."""
    _check_row(s, row)
    cached = s.cache.prefix_cache.cached_pages()
    into_cache = [p for p in pages if p in cached]
    assert not into_cache, (
        f"{len(into_cache)} of the request's pages went into the prefix cache: this engine does not "
        "cache an aborted request, use release(req, cache_it=False)"
    )
    kept = [p for p in pages if not s.cache.allocator.is_free(p)]
    assert not kept, f"{len(kept)} of the request's {len(pages)} page(s) were not given back to the free list"
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


def case_between_schedule_and_run(fn):
    s = _scheduler(fn, cache="naive")
    req, other = _two_decoding(s)
    s.io.drain()
    batch = s.schedule()  # what the stepper shows as "about to run"
    assert batch is not None and req in batch.reqs, "setup: the next batch should decode request 0"
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    _abort(s, 0)
    _check_gone(s, 0)
    try:
        s.run_batch(batch)
    except Exception as e:
        if req.status != ReqStatus.FINISHED:
            raise AssertionError(
                f"run_batch() crashed ({type(e).__name__}: {e}) on the batch scheduled before your abort: it still "
                f"holds the request, which is not marked finished (req.status is {req.status}), so the engine ran it "
                "with its pages already freed; set req.status = ReqStatus.FINISHED"
            ) from None
        raise AssertionError(f"run_batch() crashed after your abort ({type(e).__name__}: {e})") from None
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
        "the GPU may still write them; scheduler.cache.release() waits for the batch to land"
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


def case_unknown_uid(fn):
    s = _scheduler(fn)
    got = s.abort(12345)
    assert got is False, f"aborting a uid the scheduler never saw must return False; your function returned {got!r}"
    assert not s.io.drain(), "no message may be sent for a uid the scheduler does not know"
    s.add_request(0, encode(s, SHORT), SamplingParams(max_tokens=1))
    _engine("a one-token request", s.run_until_idle)
    s.io.drain()
    got = s.abort(0)
    assert got is False, (
        f"request 0 already finished (a client often hangs up just then): abort must return False, "
        f"your function returned {got!r}"
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
        assert got.get(uid) == ref[uid], f"request {uid} was disturbed by aborting request 1 (different tokens)"
    assert s.cache.num_available == s.cache.num_pages, "pages are missing after all requests ended"


CASES = [
    Case("abort while waiting", case_waiting, "a waiting request may hold nothing yet", engine=True),
    Case(
        "abort mid chunked prefill",
        case_mid_chunk,
        "it is still in scheduler.waiting, but holds a row and pages",
        engine=True,
    ),
    Case("abort while decoding", case_decoding, "it is in scheduler.running", engine=True),
    Case(
        "abort between schedule() and run_batch()",
        case_between_schedule_and_run,
        "run_batch skips requests that are marked finished",
        engine=True,
    ),
    Case(
        "abort while its batch is in flight",
        case_in_flight,
        "the overlap loop defers cache.release() until the batch lands",
        engine=True,
    ),
    Case(
        "abort with a cached prefix",
        case_shared_prefix,
        "some of its pages are shared with the prefix cache: release() sorts them out",
        engine=True,
    ),
    Case(
        "unknown or finished uid",
        case_unknown_uid,
        "scheduler.reqs.pop(uid, None) tells you whether it is live",
        engine=True,
    ),
    Case("other requests unharmed", case_others_unharmed, "only touch the aborted request", engine=True),
]
SYMBOL = "abort_request"
SOLUTION = reference
