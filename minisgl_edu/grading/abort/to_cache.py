"""Exercise 2, stretch — cache what an aborted request computed, as mini-sglang does:
`abort_request_to_cache(scheduler, uid) -> bool`, set as `Scheduler.abort_fn`.

The base part (`grading/abort.py`) gives all of an aborted request's own pages back to the free
list, which is this engine's choice (`scheduler/abort.py`). mini-sglang's scheduler frees an
aborted request exactly like a finished one (`_free_req_resources` -> `cache_req(req,
finished=True)`): the K/V it has computed, in whole pages, goes into the prefix cache, and only
the rest goes back to the free list. The stretch keeps the whole base contract and adds that:

* the tokens that count are the first `req.cached_len` of `req.all_ids` (their K/V is written);
  a sampled token whose K/V the next step would compute, the part of a chunked prefill not yet
  run, and a page only reserved for a batch that did not run yet do not count;
* only whole pages of those tokens go into the cache; a partial last page goes to the free list;
* pages the cache already holds for the same tokens (a prefix hit, or another request's copy) are
  not inserted twice: the request's duplicates go to the free list, and its lock on its prefix is
  released exactly once;
* a request that never got a row, and any request under the naive cache (which keeps nothing),
  caches nothing.

The grader's reference is `reference` below (the package has none to copy). Every case runs the
real engine (the default model, page size 4) and then checks the cache page by page: which tokens
it holds along the request's ids, which pages it adopted, the free count, the locks, and
`cache.check()`; several cases then send a new request that should reuse what was cached.

Graded on its own score line ("abort_to_cache"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

from minisgl_edu.core import ReqStatus, SamplingParams
from minisgl_edu.grading.abort.cache_checks import check_cached
from minisgl_edu.grading.abort.checks import (
    GREEDY,
    LONG,
    MARK,
    OTHER,
    SHORT,
    abort,
    check_all_back,
    check_gone,
    check_marked,
    check_message,
    engine_step,
    start,
)
from minisgl_edu.grading.abort.followers import case_leader_with_followers
from minisgl_edu.grading.abort.last_chunk_cached import case_last_chunk_in_flight
from minisgl_edu.grading.abort.queue_order import check_waiting_order
from minisgl_edu.grading.abort.release_seen import changed_after_asked, stand_in, unpinned
from minisgl_edu.grading.abort.scenes import abort_case
from minisgl_edu.grading.abort.unknown_uid import case_unknown_uid
from minisgl_edu.grading.core import Case, Mistake, hinted
from minisgl_edu.grading.fixtures import Held, held, step_until
from minisgl_edu.grading.harness import encode, remember
from minisgl_edu.kvcache import pages_for
from minisgl_edu.message import DetokenizeMsg
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request as package_abort_request

LONGER = SamplingParams(max_tokens=16, ignore_eos=True)  # enough decode steps to reach any page offset
FOLLOW = SamplingParams(max_tokens=2, ignore_eos=True)


def reference(scheduler: Scheduler, uid: int) -> bool:
    """The stretch's reference: the base part's abort, with the request's computed full pages
    handed to the prefix cache as a finished request's are (`release(req, cache_it=True)` inserts
    `all_ids[:cached_len]` in whole pages, frees the duplicates and the tail, unlocks the prefix,
    and waits for a batch in flight)."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True


def _start(fn, **overrides) -> Scheduler:
    s = start(fn, **overrides)  # an untouched stub fails here, before the model is loaded
    return s


def _abort(s: Scheduler, uid: int) -> None:
    """Abort `uid`, then check first that the request is marked finished: a request left unmarked
    shows up later as a crash or a wrong page count elsewhere (run_batch() runs it again), so its
    status and finish_reason are read before anything else happens."""
    req = s.reqs.get(uid)
    abort(s, uid)
    with hinted(MARK):
        check_marked(req)


def _after(s: Scheduler, uid: int, b: Held, **kw) -> None:
    check_gone(s, uid)
    check_message(s.io.drain(), uid)
    check_cached(s, b, **kw)


def _follow_up(s: Scheduler, ids: list[int], expect_hit: int, what: str) -> list[int]:
    """A new request with `ids`: its prompt hit is `expect_hit` tokens; run it to the end."""
    s.add_request(99, ids, FOLLOW)
    engine_step("the next request", s.run_until_idle)
    msgs = [m for m in s.io.drain() if m.uid == 99]
    got = msgs[0].cached_tokens if msgs else 0
    assert got == expect_hit, (
        f"a new request with {what} reused {got} cached token(s) (cached_tokens), expected {expect_hit}: "
        "what the aborted request computed, in whole pages, should serve it"
    )
    check_all_back(s)
    return [m.next_token for m in msgs if m.next_token >= 0]


def _hit(b: Held, ps: int, prompt_len: int) -> int:
    """What a request with a prompt of `prompt_len` tokens that starts like the aborted one reuses."""
    return min(max(b.full(ps), b.known), (prompt_len - 1) // ps) * ps


def _decode_to(s: Scheduler, uid: int, offset: int) -> None:
    """Step until request `uid` decodes and `cached_len % page_size == offset`."""
    req, ps = s.reqs[uid], s.cache.page_size
    for _ in range(40):
        if req.output_ids and req.cached_len % ps == offset:
            return
        s.step()
    raise AssertionError("setup: the request never reached the wanted page offset")


def _decoding_at(fn, offset: int, resend: bool) -> None:
    """Abort a decoding request at `cached_len % page_size == offset`, then send a new request: the
    same prompt, or (`resend`) a client resending the conversation so far (all the aborted
    request's tokens and a few more), whose hit shows exactly how many pages were cached."""
    s = _start(fn)
    ids = encode(s, SHORT)
    s.add_request(0, ids, LONGER)
    _decode_to(s, 0, offset)
    s.io.drain()
    b = held(s, 0, match=True)
    _abort(s, 0)
    _after(s, 0, b)
    if resend:
        more = b.all_ids + ids[-3:]
        _follow_up(s, more, _hit(b, s.cache.page_size, len(more)), "the aborted request's tokens as its prompt")
    else:
        _follow_up(s, ids, _hit(b, s.cache.page_size, len(ids)), "the same prompt")


def case_decoding_full_pages(fn):
    _decoding_at(fn, 2, resend=False)  # the last page of the row is half computed
    _decoding_at(fn, 0, resend=True)  # every page of the row is full and computed


def case_newest_token(fn):
    _decoding_at(fn, 3, resend=True)  # the newest sampled token's slot completes the last page, but has no K/V


def _mid_chunk(fn) -> list[int]:
    s = _start(fn, max_prefill_tokens=10)
    ids = encode(s, LONG)
    s.add_request(0, ids, GREEDY)
    s.step()
    req = s.reqs[0]
    assert req.cached_len == 10 < len(ids), "setup: expected a chunked prefill with 10 tokens done"
    s.io.drain()
    b = held(s, 0, match=True)
    _abort(s, 0)
    _after(s, 0, b)
    return _follow_up(s, ids, _hit(b, s.cache.page_size, len(ids)), "the same prompt")


def case_mid_chunk(fn):
    got = _mid_chunk(fn)
    ref = remember("abort_to_cache: mid chunk", lambda: _mid_chunk(SOLUTION))
    assert got == ref, (
        "the next request with the same prompt reused the cached pages but answered differently: the pages "
        "in the cache do not hold the K/V of the tokens they are filed under"
    )


def case_waiting(fn):
    s = _start(fn)
    s.add_request(1, encode(s, SHORT), GREEDY)  # the head of the queue: the aborted request waits behind it
    s.add_request(0, encode(s, LONG), GREEDY)
    b = held(s, 0, match=True)
    _abort(s, 0)
    _after(s, 0, b)
    engine_step("running the other request to the end", s.run_until_idle)
    assert s.is_idle and not s.reqs, "the scheduler should have nothing left to do"
    check_all_back(s)
    check_waiting_order(fn)
    case_unknown_uid(fn)


def case_between_schedule_and_run(fn):
    s = _start(fn, max_prefill_tokens=16)
    ps = s.cache.page_size
    s.add_request(0, encode(s, SHORT), LONGER)
    _decode_to(s, 0, 0)
    s.io.drain()
    batch = s.schedule()  # reserves a fresh page for the token it is about to compute
    req = s.reqs[0]
    assert batch is not None and req in batch.reqs, "setup: the next batch should decode request 0"
    assert len(s.cache.page_table.pages[req.table_idx]) == req.cached_len // ps + 1, "setup: a page reserved"
    b = held(s, 0, match=True)
    _abort(s, 0)
    engine_step("run_batch() of the batch scheduled before the abort", lambda: s.run_batch(batch))
    _after(s, 0, b)
    # A new prompt whose first chunk is scheduled, then aborted before it ran: nothing is computed.
    s.add_request(1, encode(s, LONG), GREEDY)
    batch = s.schedule()
    req = s.reqs[1]
    assert batch is not None and req in batch.reqs and req.cached_len == req.prefix_len, "setup: a first chunk"
    b = held(s, 1, match=True)
    _abort(s, 1)
    engine_step("run_batch() of the batch scheduled before the abort", lambda: s.run_batch(batch))
    _after(s, 1, b)
    assert engine_step("the next step()", s.step) is None and s.is_idle, "the scheduler should have nothing left to do"


def case_in_flight(fn):
    for offset in (3, 0):  # inside a page; at a page boundary, a page reserved for the step in flight
        _in_flight_at(fn, offset)


def _in_flight_at(fn, offset: int) -> None:
    s = _start(fn)
    ps = s.cache.page_size
    ids = encode(s, SHORT)
    s.add_request(0, ids, LONGER)
    req = s.reqs[0]
    for _ in range(40):
        s.overlap_step()
        if s.has_in_flight and req in s.in_flight_batch.reqs and req.output_ids and req.cached_len % ps == offset:
            break
    else:
        raise AssertionError("setup: the request never had a decode batch in flight at the wanted offset")
    s.io.drain()
    b = held(s, 0, match=True)
    _abort(s, 0)
    check_gone(s, 0)
    # the batch's pin undone; a field changed after asking; a copy released instead of the request
    mistake = unpinned(s) or changed_after_asked(s, req) or stand_in(s)
    if mistake is not None:
        raise mistake
    early = [p for p in b.row[b.own_from :] if s.cache.allocator.is_free(p)]
    reserved = b.row[pages_for(b.cached_len, ps) :]  # reserved for the step in flight, no K/V yet
    if early and set(early) <= set(reserved):
        raise Mistake(
            f"page(s) {early} went back to the free list at once: its computed tokens ({b.cached_len}) end at a "
            f"page boundary (pages of {ps}), and the last page of its row was reserved for the step in flight, "
            "which the GPU is writing now",
            "a page reserved for the step in flight holds no K/V yet but is in use until the batch lands: give "
            "every page back through scheduler.cache.release(), which waits for it",
        )
    assert not early, (
        f"{len(early)} page(s) went back to the free list while the request's batch is still in flight: the GPU "
        "may still write them; scheduler.cache.release() waits for the batch to land"
    )
    engine_step("the next overlap step", s.overlap_step)  # the batch lands; the deferred release happens
    msgs = s.io.drain()
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], (
        "the aborted request still got a token from the batch that was in flight"
    )
    check_message(msgs, 0)
    check_cached(s, b)
    _follow_up(s, ids, _hit(b, ps, len(ids)), "the same prompt")


def _locked_by(req) -> int:
    """Pages on the path from the root to the node that `req` locks."""
    n, node = 0, req.cache_handle
    while node is not None and node.parent is not None:
        n += len(node.pages)
        node = node.parent
    return n


def _shared_prefix(fn) -> list[int]:
    s = _start(fn)
    ps = s.cache.page_size
    ids = encode(s, LONG)
    s.add_request(0, ids, SamplingParams(max_tokens=4, ignore_eos=True))
    engine_step("the first request", s.run_until_idle)
    s.io.drain()
    assert s.cache.prefix_cache.cached_pages(), "setup: the first request's pages should be in the prefix cache"
    for uid in (1, 2):  # the same prompt twice: both reuse the cached prefix and lock it
        s.add_request(uid, ids, LONGER)
    req = s.reqs[1]
    # Past the first request's cached tokens by a page, ending inside a page.
    step_until(
        s, lambda: req.cached_len >= len(ids) + 2 * ps and req.cached_len % ps == 2, "a decode step at that page offset"
    )
    s.io.drain()
    b = held(s, 1, match=True)
    assert b.own_from < b.known < b.full(ps), (
        "setup: the cache should hold a copy of some of the request's own pages, and not all of its computed ones"
    )
    _abort(s, 1)
    _after(s, 1, b, others_lock=_locked_by(s.reqs[2]))
    engine_step("running request 2 to the end", s.run_until_idle)
    tokens = [m.next_token for m in s.io.drain() if m.uid == 2 and m.next_token >= 0]
    check_all_back(s)
    return tokens


def case_shared_prefix(fn):
    got = _shared_prefix(fn)
    ref = remember("abort_to_cache: shared prefix", lambda: _shared_prefix(SOLUTION))
    assert got == ref, "request 2, which shares the aborted request's prefix, answered differently after the abort"


def _first_of_n(fn) -> list[int]:
    """n=2: request 3 is the first of two answers to one prompt, request 4 the second. Admitted with
    a prefix hit (the chat template's start, cached by request 0), request 3 hands its prompt's
    full pages to the prefix cache after its prefill (req.shared_len > req.prefix_len); it is
    aborted while both decode, two pages past its prompt. Returns request 4's tokens."""
    s = _start(fn)
    ps = s.cache.page_size
    s.add_request(0, encode(s, SHORT), FOLLOW)
    engine_step("the first request", s.run_until_idle)
    ids = encode(s, OTHER)
    s.add_request(3, ids, LONGER)
    s.add_request(4, ids, LONGER, prompt_leader=3)
    req = s.reqs[3]
    step_until(
        s,
        lambda: s.reqs[4].output_ids and req.cached_len >= len(ids) + 2 * ps and req.cached_len % ps == 2,
        "both answers decoding, the first two pages past its prompt",
    )
    s.io.drain()
    b = held(s, 3, match=True)
    hit = req.prefix_len // ps
    assert 0 < hit < b.own_from == b.known < b.full(ps), (
        "setup: the first answer should have handed its prompt's pages to the cache, beyond its prefix hit"
    )
    _abort(s, 3)
    _after(s, 3, b, others_lock=_locked_by(s.reqs[4]), hit=hit)
    engine_step("request 4, the second answer", s.run_until_idle)
    tokens = [m.next_token for m in s.io.drain() if m.uid == 4 and m.next_token >= 0]
    check_all_back(s)
    return tokens


def case_first_of_n(fn):
    got = _first_of_n(fn)
    ref = remember("abort_to_cache: first of n", lambda: _first_of_n(SOLUTION))
    assert got == ref, (
        "request 4, the second answer to the aborted request's prompt, answered differently after the abort: the "
        "prompt pages it reads were freed or overwritten"
    )


def case_naive(fn):
    s = _start(fn, cache="naive", max_prefill_tokens=10)
    s.add_request(0, encode(s, SHORT), LONGER)
    _decode_to(s, 0, 2)
    s.add_request(1, encode(s, LONG), GREEDY)
    s.step()  # the first chunk of request 1's prompt (prefill goes first)
    assert 0 < s.reqs[1].cached_len < len(s.reqs[1].input_ids), "setup: expected a chunked prefill"
    s.io.drain()
    for uid in (0, 1):  # one decoding, one part-way through its prompt
        b = held(s, uid, match=True)
        _abort(s, uid)
        _after(s, uid, b)
    assert s.cache.num_free == s.cache.num_pages, "with the naive cache every page must be free after both aborts"


CASES = [
    Case(
        "stretch: decoding, full pages only",
        case_decoding_full_pages,
        "whole pages of req.all_ids[:req.cached_len]; a partial last page is freed",
        engine=True,
    ),
    Case(
        "stretch: the newest token has no K/V",
        case_newest_token,
        "the last sampled token is computed only in the next step: req.cached_len does not count it",
        engine=True,
    ),
    Case(
        "stretch: mid chunked prefill",
        case_mid_chunk,
        "only the chunks that ran are computed: req.cached_len, not the prompt's length",
        engine=True,
    ),
    Case(
        "stretch: waiting, unknown or finished: nothing to cache",
        case_waiting,
        "a request without a row has computed nothing",
        engine=True,
    ),
    Case(
        "stretch: between schedule() and run_batch()",
        case_between_schedule_and_run,
        "pages reserved for a batch that did not run hold no K/V",
        engine=True,
    ),
    Case(
        "stretch: its batch in flight",
        case_in_flight,
        "on the overlap loop, pages go back only when the batch lands: the cache manager knows when",
        engine=True,
    ),
    Case(
        "stretch: its last prompt chunk in flight",
        case_last_chunk_in_flight,
        "on the overlap loop, launch() counts a prompt chunk in req.cached_len at once: no token sampled yet",
        engine=True,
    ),
    Case(
        "stretch: after a cached prefix",
        case_shared_prefix,
        "the prefix pages are the cache's already: no second insert, unlock once",
        engine=True,
    ),
    Case(
        "stretch: the first of n answers to one prompt",
        case_first_of_n,
        "the first of n answers handed its prompt's pages to the cache after its prefill (req.shared_len): they "
        "are the cache's, not copies",
        engine=True,
    ),
    Case(
        "stretch: abort the first of n answers while the others wait",
        case_leader_with_followers,  # the base part's case: nothing is cached, the follower stays live
        "answers 3 and 4 to one prompt (4 waits for 3's prompt to be computed) and request 5; 3 is aborted at once",
        engine=True,
    ),
    Case(
        "stretch: with the naive cache",
        case_naive,
        "the naive cache keeps nothing: what insert() says it has, you free",
        engine=True,
    ),
]
CASES.append(abort_case(reference, stretch=True))
SYMBOL = "abort_request_to_cache"
SOLUTION = reference
REFERENCES = [package_abort_request]  # the base part's package answer is not an answer here either
