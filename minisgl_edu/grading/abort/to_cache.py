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
from minisgl_edu.grading.abort.base import case_unknown_uid
from minisgl_edu.grading.abort.checks import (
    DROPS_A_COMPUTED_TOKEN,
    GREEDY,
    LONG,
    PROMPT_ONLY,
    SHORT,
    abort,
    caches_the_prompt_only,
    check_all_back,
    check_consistent,
    check_gone,
    check_marked,
    check_message,
    check_row,
    drops_a_computed_token,
    engine_step,
    start,
)
from minisgl_edu.grading.abort.scenes import abort_case
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.fixtures import Held, held, step_until
from minisgl_edu.grading.harness import encode, remember
from minisgl_edu.kvcache import pages_for
from minisgl_edu.kvcache.naive_cache import NaiveCache
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


def _match(s: Scheduler, ids: list[int]) -> int:
    return len(s.cache.prefix_cache.match_prefix(ids)[1])


def _too_many(b: Held, got: int, expect: int, ps: int) -> Mistake:
    """Name the mistake behind `got` cached pages along the request's ids, `expect` right."""
    c = b.cached_len
    head = (
        f"{got - expect} page(s) too many went into the prefix cache: the request had computed K/V for "
        f"{c} token(s) (req.cached_len), that is {c // ps} full page(s) of {ps}"
    )
    if c < b.prompt_len:
        return Mistake(
            f"{head}: pages for prompt tokens that were never computed. Only the first {c} of the prompt's "
            f"{b.prompt_len} tokens have K/V (the rest of a chunked prefill has not run)",
            "part-way through a chunked prefill only the chunks that ran are computed: count req.cached_len, not "
            "the prompt's length or the pages the row holds",
        )
    if got == len(b.row) and c % ps == 0:
        return Mistake(
            f"{head}, but every page of its row went in: a page is reserved for the next forward pass before "
            "that pass runs, so the last page of the row holds no computed K/V yet",
            "a page reserved for a step that has not run holds no K/V: count req.cached_len tokens, not the "
            "pages of the row",
        )
    if c % ps == ps - 1 and got == c // ps + 1:
        return Mistake(
            f"{head}. The extra page's last slot belongs to the newest sampled token, which is not run through "
            "the model until the next step",
            "the newest sampled token has no K/V until the next step runs it: count req.cached_len, not "
            "len(req.all_ids) (and a partial last page is never cached)",
        )
    if c % ps and got == c // ps + 1:
        return Mistake(
            f"{head}. The extra page is the partial last page: only {c % ps} of its {ps} slots hold computed K/V",
            "a partial last page is never cached: only whole pages of req.all_ids[:req.cached_len] go into the "
            "prefix cache (round down), the partial one goes back to the free list",
        )
    return Mistake(f"{head}: pages with tokens whose K/V was never computed are in the cache")


def _check_cached(s: Scheduler, b: Held, *, others_lock: int = 0) -> None:
    """After the abort (and after its batch landed): the computed full pages are cached, everything
    else of the request's own is free, nothing twice, no lock left behind. `others_lock`: pages
    that requests still running keep locked."""
    check_row(s, b.row_idx)
    cached = set(s.cache.prefix_cache.cached_pages())
    _check_nothing_freed_from_the_cache(s, b, cached)
    keeps = not isinstance(s.cache.prefix_cache, NaiveCache)
    want_adopted = _check_adopted(s, b, cached, keeps)
    _check_freed_and_unlocked(s, b, cached, keeps, want_adopted, others_lock)
    check_consistent(s)


def _check_nothing_freed_from_the_cache(s: Scheduler, b: Held, cached: set[int]) -> None:
    """No page is both cached and free (a request given it would overwrite K/V), none left the cache."""
    both = [p for p in cached if s.cache.allocator.is_free(p)]
    prefix = [p for p in both if p in b.shared]
    if prefix:
        raise Mistake(
            f"{len(prefix)} page(s) of the request's prefix hit (the first {b.own_from} page(s) of its row, the "
            "prefix cache's own pages it was admitted with) went onto the free list while the cache still holds "
            "them: they are not copies. The next request given one would overwrite K/V the cache hands out",
            "the pages of the prefix the request was admitted with (req.prefix_len tokens) are the cache's: "
            "never free them; only the request's own copies of pages the tree already had (insert()'s count, "
            "past the prefix) go to the free list",
        )
    if both:
        raise Mistake(
            f"{len(both)} page(s) are in the prefix cache and on the free list at once: a page the cache "
            "adopted was freed as well (inserted twice, or freed after insert() took it). The next request "
            "given that page would overwrite K/V the cache still hands out",
            "a page insert() adopted is the cache's: insert once, and never free it after",
        )
    lost = b.cached - cached
    assert not lost, f"{len(lost)} page(s) of the prefix cache were taken out of it: the cache's pages are not yours"


def _check_adopted(s: Scheduler, b: Held, cached: set[int], keeps: bool) -> set[int]:
    """The cache adopted exactly the request's computed full pages it did not hold yet, and now holds every
    computed full page along its ids (the naive cache keeps none). Returns the pages it should adopt."""
    ps = s.cache.page_size
    full = b.full(ps)
    expect = max(full, b.known) if keeps else 0
    adopted = cached - b.cached
    want_adopted = set(b.row[b.known : full]) if keeps else set()
    extra = adopted - want_adopted
    if extra:
        mine = [b.row.index(p) for p in extra if p in b.row]
        assert len(mine) == len(extra), "the prefix cache took pages that were not the aborted request's"
        if min(mine) < b.known:
            raise AssertionError(
                "the prefix cache took the request's copy of pages it already held: pages for the same tokens "
                "must not be inserted twice (insert() keeps its own copy and returns how many it had)"
            )
        raise _too_many(b, max(mine) + 1, expect, ps)
    got = _match(s, b.all_ids) if keeps else 0
    if got > expect:
        raise _too_many(b, got, expect, ps)
    if got < expect or adopted != want_adopted:
        raise _too_few(b, got, expect, ps, adopted, s.abort_fn)
    return want_adopted


def _too_few(b: Held, got: int, expect: int, ps: int, adopted: set[int], fn) -> Exception:
    """Name the mistake behind too few pages cached along the request's ids (`got`, `expect` right)."""
    full = b.full(ps)
    if got <= max(b.known, b.prompt_len // ps) < full and caches_the_prompt_only(fn):
        return Mistake(
            f"only the prompt's full pages went into the prefix cache: {b.cached_len} tokens were computed "
            f"({full} full pages), {b.prompt_len} of them the prompt's, and the cache holds {got} page(s) "
            "along its tokens",
            PROMPT_ONLY,
        )
    if got <= b.known and not adopted:
        return Mistake(
            f"none of the request's computed pages went into the prefix cache: it had {b.cached_len} "
            f"computed token(s), {full} full page(s) of {ps}, and a new request with the same "
            "start would have reused them (the base part's answer gives them all to the free list)",
            "a request part-way through a chunked prefill is still in scheduler.waiting, but the chunks that ran "
            "are computed: cache them too, release(req, cache_it=True)"
            if b.cached_len < b.prompt_len
            else "cache what the request computed: release(req, cache_it=True) files its computed full pages "
            "in the prefix cache",
        )
    if b.cached_len % ps == 0 and got == full - 1 and drops_a_computed_token(fn):
        return Mistake(
            f"one page too few went into the prefix cache: {b.cached_len} tokens were computed (req.cached_len), "
            f"{full} full pages of {ps}, and only {got} were cached; the last one, full of computed K/V, went to "
            "the free list",
            DROPS_A_COMPUTED_TOKEN,
        )
    if got == b.prompt_len // ps:
        return Mistake(
            f"only the prompt's {got} full page(s) went into the prefix cache, but {b.cached_len} tokens were "
            f"computed ({full} full pages)",
            PROMPT_ONLY,
        )
    return AssertionError(
        f"the prefix cache holds {got} page(s) along the request's tokens, expected {expect} "
        f"(req.cached_len={b.cached_len}, page size {ps}): its computed full pages, filed under their tokens"
    )


def _check_freed_and_unlocked(
    s: Scheduler, b: Held, cached: set[int], keeps: bool, want_adopted: set[int], others_lock: int
) -> None:
    """Every page of the request's own but those the cache should adopt is back on the free list (no
    leak, nothing freed that was not the request's), and its lock on its cached prefix is released
    exactly once: every cached page is evictable but those the running requests keep locked."""
    cache = s.cache
    own = len(b.row) - b.own_from
    want_free = b.free + own - len(want_adopted)
    if cache.num_free < want_free:
        raise Mistake(
            f"{want_free - cache.num_free} of the request's page(s) are neither free nor in the prefix cache (a leak): "
            "insert() returns how many leading pages the cache already held, and the request's own copies of "
            "those, like its pages after the last full computed one, go back to the free list"
            + (" (the naive cache keeps nothing: insert() says it already has every page)" if not keeps else ""),
            "free the request's copies of the first n pages, n being what insert() returned, and its pages "
            "after the last full computed one",
        )
    assert cache.num_free == want_free, (
        f"{cache.num_free - want_free} page(s) too many are free: a page was freed that was not the request's own"
    )
    evictable = cache.prefix_cache.num_evictable
    want_evictable = len(cached) - others_lock
    if evictable > want_evictable:
        raise Mistake(
            f"{evictable - want_evictable} cached page(s) that another running request still reads became "
            "evictable: the prefix lock was released twice (release() already unlocks req.cache_handle)",
            "unlock the request's cached prefix once: release() already does",
        )
    assert evictable == want_evictable, (
        "the cached prefix the request was using is still locked, so it can never be evicted: unlock it once"
    )


def _after(s: Scheduler, uid: int, b: Held, **kw) -> None:
    check_gone(s, uid)
    check_message(s.io.drain(), uid)
    _check_cached(s, b, **kw)


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
    abort(s, 0)
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
    abort(s, 0)
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
    abort(s, 0)
    _after(s, 0, b)
    engine_step("running the other request to the end", s.run_until_idle)
    assert s.is_idle and not s.reqs, "the scheduler should have nothing left to do"
    check_all_back(s)
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
    abort(s, 0)
    engine_step("run_batch() of the batch scheduled before the abort", lambda: s.run_batch(batch))
    check_marked(req)
    _after(s, 0, b)
    # A new prompt whose first chunk is scheduled, then aborted before it ran: nothing is computed.
    s.add_request(1, encode(s, LONG), GREEDY)
    batch = s.schedule()
    req = s.reqs[1]
    assert batch is not None and req in batch.reqs and req.cached_len == req.prefix_len, "setup: a first chunk"
    b = held(s, 1, match=True)
    abort(s, 1)
    engine_step("run_batch() of the batch scheduled before the abort", lambda: s.run_batch(batch))
    check_marked(req)
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
    abort(s, 0)
    check_gone(s, 0)
    check_marked(req)
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
    _check_cached(s, b)
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
    abort(s, 1)
    _after(s, 1, b, others_lock=_locked_by(s.reqs[2]))
    engine_step("running request 2 to the end", s.run_until_idle)
    tokens = [m.next_token for m in s.io.drain() if m.uid == 2 and m.next_token >= 0]
    check_all_back(s)
    return tokens


def case_shared_prefix(fn):
    got = _shared_prefix(fn)
    ref = remember("abort_to_cache: shared prefix", lambda: _shared_prefix(SOLUTION))
    assert got == ref, "request 2, which shares the aborted request's prefix, answered differently after the abort"


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
        abort(s, uid)
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
        "stretch: after a cached prefix",
        case_shared_prefix,
        "the prefix pages are the cache's already: no second insert, unlock once",
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
