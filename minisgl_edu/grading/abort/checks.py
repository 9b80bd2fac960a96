"""What exercise 2's graders assert after an abort, shared by the base part and its stretch.

`plugged`-style start (`start(fn)`), the abort itself (`abort(s, uid)`, which must return True),
and the checks: the request gone from every queue (`check_gone`), marked finished
(`check_marked`), the detokenizer told once (`check_message`), its row given back (`check_row`),
no page of the prefix cache on the free list (`check_shared_not_freed`), exact free and evictable
counts against a `fixtures.Held` snapshot taken just before (`check_freed`), everything back once
every request ended (`check_all_back`). Each failed assertion says what was left behind and ends
with the hint for that assertion.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from minisgl_edu.core import ReqStatus, SamplingParams
from minisgl_edu.grading.abort.message_fields import check_fields
from minisgl_edu.grading.abort.message_flags import check_flags
from minisgl_edu.grading.abort.message_token import check_next_token
from minisgl_edu.grading.abort.naive_handle import by_the_handle
from minisgl_edu.grading.abort.one_try import left_running
from minisgl_edu.grading.abort.own_mark import row_kept
from minisgl_edu.grading.abort.probes import ROW_ZERO, carried_over, carried_over_mistake, skips_row_zero
from minisgl_edu.grading.abort.queue_copy import left_waiting
from minisgl_edu.grading.abort.release_seen import aborting, changed, reads_first, watch
from minisgl_edu.grading.abort.status_kind import check_status_kind
from minisgl_edu.grading.abort.uid_zero import turns_uid_zero_away, uid_zero_mistake
from minisgl_edu.grading.core import Mistake, hinted
from minisgl_edu.grading.fixtures import Held, plugged
from minisgl_edu.grading.limits import CaseTimeout
from minisgl_edu.scheduler import Scheduler

LONG = [{"role": "user", "content": "Tell me a long story about a cat, a dog and a very old lighthouse by the sea."}]


SHORT = [{"role": "user", "content": "Say hello."}]


OTHER = [{"role": "user", "content": "Name three rivers and the seas they flow into."}]


# short prompts that fill the cache before an abort (each its own prefix)
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


GREEDY = SamplingParams(max_tokens=8, ignore_eos=True)
# greedy, with stop strings no text of the default model holds: the abort message must repeat them
WITH_STOP = SamplingParams(max_tokens=8, ignore_eos=True, stop=["<no such text>", "</never>"])


RELEASE_HINT = (
    "the cache manager's release(req, ...) gives back exactly what the request holds: its own pages, "
    "its row, and its hold on a cached prefix (once), and it waits for a batch in flight"
)

MARK = "mark it finished: req.status = ReqStatus.FINISHED and req.finish_reason = 'abort'"
RELEASE = "give back what it holds with scheduler.cache.release(req, cache_it=False)"


REASON_HINT = (
    "the abort message's finish_reason is 'abort' (the API server tells the client so): a message built from "
    "req.finish_reason before the request is marked carries None"
)


def start(fn, **overrides) -> Scheduler:
    """A fresh scheduler with `fn` as its abort_fn (an untouched stub fails before the model loads),
    its cache's release() watched (`release_seen`)."""
    s = plugged(fn, "abort_fn", 0, **overrides)
    watch(s)
    return s


def engine_step(what: str, run: Callable[[], object]):
    """Run engine work after the student's abort; a crash there is reported as the engine's."""
    try:
        return run()
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"after your abort, {what} failed ({type(e).__name__}: {e})") from e


NEVER_RETURNED = (
    "your abort must return at once: nothing else runs while it runs, so a loop that waits for the scheduler to "
    "change (the request to leave a queue, a batch to land) never ends; release() already waits for a batch"
)


@contextmanager
def returns() -> Iterator[None]:
    """The student's abort runs inside: when it runs past the case's limit, the hint says why it never returns."""
    try:
        yield
    except CaseTimeout as e:
        e.hint = NEVER_RETURNED
        raise


@hinted("return True for a live uid (a key of scheduler.reqs), False for any other")
def abort(s: Scheduler, uid: int) -> None:
    held = _what_it_held(s.reqs.get(uid))
    with returns(), aborting(s, s.reqs.get(uid)):
        try:
            got = s.abort(uid)
        except Exception as e:
            mistake = changed(s)  # release() crashed on a field the abort had changed
            if mistake is None and carried_over(s.abort_fn):
                mistake = carried_over_mistake(uid, e)
            if mistake is None:
                raise
            raise mistake from e
    if got is not True and carried_over(s.abort_fn):
        raise carried_over_mistake(uid, got)
    if got is not True and uid == 0 and turns_uid_zero_away(s.abort_fn):
        raise uid_zero_mistake(got)
    if got is False and held:
        raise Mistake(
            f"aborting a live request (uid {uid}) must return True; your function returned False ({held})",
            f"the return value says only whether the uid was live (a key of scheduler.reqs): uid {uid} was, and "
            f"{held}. Return True for every live uid, whatever it held or could cache, and False only for a "
            "uid not in scheduler.reqs",
        )
    assert got is True, (
        f"aborting a live request (uid {uid}) must return True; your function returned {got!r}. Hint: a uid is "
        "live while it is a key of scheduler.reqs"
    )


def _what_it_held(req) -> str:
    """What a live request held when it was aborted, in words (read before the abort changes it)."""
    if req is None:
        return ""
    if getattr(req, "table_idx", -1) < 0:
        return "it was waiting: never admitted, no row, nothing computed"
    return f"it held row {req.table_idx}, with {getattr(req, 'cached_len', 0)} tokens computed"


@hinted("tell the detokenizer once: DetokenizeMsg(uid, -1, True, 'abort', stop) through scheduler.io.send")
def check_message(msgs, uid: int, stop: Optional[list[str]] = None) -> None:
    """The one finished message of the aborted request `uid`; `stop`: the stop strings it must carry
    (checked when the case's request has some)."""
    mine = [m for m in msgs if m.uid == uid]
    assert mine, (
        f"the detokenizer got no message for the aborted request (uid {uid}), so it and the API server keep its "
        "state forever. Hint: send DetokenizeMsg(uid, -1, True, 'abort', stop) with scheduler.io.send([...]), "
        "stop being the request's stop strings (req.sampling_params.stop)"
    )
    last = mine[-1]
    check_flags(last)  # the two swapped, before each is checked alone
    if not last.finished:
        raise Mistake(
            "the message to the detokenizer must have finished=True, or it waits for more tokens forever",
            "the abort message ends the request: its finished field is True",
        )
    if last.finish_reason != "abort":
        raise Mistake(f"the message's finish_reason is {last.finish_reason!r}, expected 'abort'", REASON_HINT)
    check_next_token(last)
    check_fields(last, stop)
    assert len([m for m in mine if m.finished]) == 1, (
        "the detokenizer got more than one finished message for the request"
    )


@hinted("take the request out of scheduler.reqs and out of the queue or set that holds it")
def check_gone(s: Scheduler, uid: int) -> None:
    assert uid not in s.reqs, (
        f"the request (uid {uid}) is still in scheduler.reqs: the scheduler still counts it as live, and a "
        "second abort would free it again. Hint: pop it from scheduler.reqs"
    )
    if any(r.uid == uid for r in s.waiting) and (mistake := left_waiting(s.abort_fn, uid)):
        raise mistake
    if any(r.uid == uid for r in s.waiting):
        raise Mistake(
            f"the request (uid {uid}) is still in the waiting queue (scheduler.waiting)",
            "remove the aborted request itself from scheduler.waiting: a waiting request, admitted or not, is "
            "somewhere in that deque, not necessarily the head; look for it there whatever its status (WAITING, "
            "or PREFILLING once admitted) or its row",
        )
    if any(r.uid == uid for r in s.running) and (mistake := left_running(s.abort_fn, uid)):
        raise mistake
    assert all(r.uid != uid for r in s.running), (
        f"the request (uid {uid}) is still in the running set (scheduler.running). Hint: remove that request "
        "itself from the list"
    )


@hinted(MARK)
def check_marked(req) -> None:
    check_status_kind(req)
    assert req.status == ReqStatus.FINISHED, (
        f"the request is not marked finished (req.status is {req.status}): a batch scheduled before the "
        "abort still holds it, and the engine runs it with its pages gone. Hint: set "
        "req.status = ReqStatus.FINISHED; run_batch() and the overlap loop skip finished requests"
    )
    assert req.finish_reason == "abort", f"req.finish_reason is {req.finish_reason!r}, expected 'abort'"


def check_marked_where(req, where: str) -> None:
    """A request aborted outside scheduler.running is marked finished too."""
    check_status_kind(req)
    if req.status != ReqStatus.FINISHED:
        raise Mistake(
            f"the request was aborted {where} and is not marked finished (req.status is {req.status}): a batch "
            "that schedule() chose before the abort still lists it, and the other answers of an n > 1 request "
            "wait for their leader while it is not finished",
            "mark it finished wherever it was, the waiting queue included (not only a request of "
            "scheduler.running): req.status = ReqStatus.FINISHED",
        )
    check_marked(req)


@reads_first
@hinted(RELEASE)
def check_memory(s: Scheduler, row: int, free0: int, cached0: set[int]) -> None:
    """Alone in the scheduler: pages and rows back where they were before the request came."""
    cache = s.cache
    check_row(s, row)
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
    check_shared_not_freed(s)
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
    check_consistent(s)


@reads_first
@hinted("scheduler.cache.release(req, ...) gives back the request's page-table row with its pages")
def check_row(s: Scheduler, row: int) -> None:
    """`row` is the request's page-table row before the abort (-1: it had none)."""
    if row < 0 or row not in s.cache.page_table.used_rows():
        return
    # the probes (row_kept) build a scheduler on the shared engine, which resets this one's rows: run them
    # only once the row is known to be still held
    if mistake := row_kept(s, row):
        raise mistake
    kept = f"the request's page-table row ({row}) was not given back"
    raise by_the_handle(s, kept) or AssertionError(f"{kept}. Hint: {RELEASE_HINT}")


WAITING_HOLDS = (
    "a request still in scheduler.waiting part-way through a chunked prefill holds a row and pages too: "
    "release it as well, scheduler.cache.release(req, cache_it=False), whichever queue it was in"
)


@reads_first
def check_release_asked(s: Scheduler, row: int, deferred: int) -> None:
    """Right after the abort of a request whose batch is in flight (it held `row`; `deferred`
    releases were waiting before): a release was asked for, which waits for the batch to land."""
    if s.cache.num_deferred == deferred and row in s.cache.page_table.used_rows():
        raise by_the_handle(s, "your abort asked for no release of the request whose batch is in flight") or Mistake(
            "your abort asked for no release of the request whose batch is in flight: nothing gives its row, its "
            "pages and its lock back later (the overlap loop only finishes a release it was asked for)",
            "call scheduler.cache.release(req, cache_it=False) while its batch is in flight too: release() itself "
            "waits for the batch to land, then gives everything back",
        )


FREED_AT_ONCE = (
    "give the pages back only through scheduler.cache.release(req, cache_it=False), not allocator.free(): "
    "release() waits for the batch in flight to land before any page goes back; a free by hand does not wait"
)
FREED_AS_WELL = "release() alone gives every page back, once the batch lands: free none of them yourself as well"


@reads_first
def check_nothing_back_early(s: Scheduler, pages: list[int], deferred: int) -> None:
    """Right after the abort of a request whose batch is in flight (`pages` its row's pages, `deferred`
    releases waiting before): none of them is free yet. When some are, whether a release was left
    waiting tells a free by hand instead of release() from one made besides it."""
    early = [p for p in pages if s.cache.allocator.is_free(p)]
    if not early:
        return
    asked = s.cache.num_deferred > deferred
    raise Mistake(
        f"{len(early)} page(s) went back to the free list while the request's batch is still in flight: the GPU "
        "may still write them. "
        + (
            "Your abort asked release() to wait for the batch, and gave pages back itself as well"
            if asked
            else "No release was left waiting for the batch: your abort gave them back itself, at once"
        ),
        FREED_AS_WELL if asked else FREED_AT_ONCE,
    )


@reads_first
def check_waiting_released(s: Scheduler, row: int, free_before: int) -> None:
    """A request aborted part-way through its chunked prefill (still in scheduler.waiting, with a
    row and the pages of its first chunks) had something given back: an abort that left its row in
    use and freed no page at all took the waiting queue for one that holds nothing."""
    if row < 0 or row not in s.cache.page_table.used_rows() or s.cache.num_free != free_before:
        return
    held = len(s.cache.page_table.pages[row])
    if mistake := row_kept(s, row):
        raise mistake
    raise Mistake(
        f"the request was aborted part-way through its chunked prefill, while still in scheduler.waiting: your "
        f"abort gave back nothing of what it held (its page-table row {row} and its {held} page(s) are still "
        "in use)",
        WAITING_HOLDS,
    )


@reads_first
@hinted(
    "the first pages of its row (its cached prefix) belong to the prefix cache: free only the request's own "
    "pages, as release(req, cache_it=False) does"
)
def check_shared_not_freed(s: Scheduler) -> None:
    cache = s.cache
    freed_shared = {p for p in cache.prefix_cache.cached_pages() if cache.allocator.is_free(p)}
    assert not freed_shared, (
        f"{len(freed_shared)} page(s) that belong to the prefix cache (shared with every request "
        "with the same prompt start) were put on the free list. Hint: only release() knows which "
        "pages of the row are the request's own"
    )


@reads_first
@hinted(RELEASE)
def check_own_pages(s: Scheduler, row: int, pages: list[int]) -> None:
    """Others still run: the aborted request's own pages are free now, and none went to the cache."""
    check_row(s, row)
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
    check_shared_not_freed(s)


@reads_first
def check_all_back(s: Scheduler) -> None:
    """Every request is over: every page is free or cached (and unlocked), every row is free."""
    cache = s.cache
    used = cache.page_table.used_rows()
    if used == [0] and skips_row_zero(s.abort_fn):
        raise Mistake("page-table row 0 is still in use after every request ended", ROW_ZERO)
    assert not used, "a page-table row is still in use after every request ended"
    check_shared_not_freed(s)
    missing = cache.num_pages - cache.num_available
    assert missing <= 0, f"{missing} page(s) are neither free nor evictable after every request ended"
    check_consistent(s)


@reads_first
def check_consistent(s: Scheduler) -> None:
    try:
        s.cache.check()
    except AssertionError as e:
        raise AssertionError(f"the cache's bookkeeping is inconsistent after your abort: {e}") from None


def snapshot(s: Scheduler):
    return s.cache.num_free, set(s.cache.prefix_cache.cached_pages())


@reads_first
@hinted(RELEASE)
def check_freed(s: Scheduler, h: Held, others: str = "", evictable: int | None = None, leader: bool = False) -> None:
    """After the abort of `h.uid` (its batch landed, if any): exactly its own pages are free again,
    its row is free, the cache kept its pages, and the locks of the prefix are what `others`
    (the requests still reading it, in words; "" for none) leave. `evictable`: the expected
    num_evictable (default: unchanged when others hold the prefix, every cached page when not).
    `leader`: the request is the first of n answers, which handed its prompt's pages to the cache."""
    cache = s.cache
    uid, ps = h.uid, cache.page_size
    check_row(s, h.row_idx)
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
    if freed_shared and leader:
        raise Mistake(
            f"uid {uid} is the first of n=2 answers to one prompt: after its prefill it handed its prompt's first "
            f"{len(h.shared)} full page(s) to the prefix cache, which {others} reads; {len(freed_shared)} of them "
            f"({freed_shared}) were put on the free list",
            "the first of n answers shares its prompt's pages: its own pages start after req.shared_len tokens "
            "when that is larger than req.prefix_len, max(req.prefix_len, req.shared_len) // page_size "
            "(release() knows)",
        )
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
        raise Mistake(
            f"{len(kept)} of uid {uid}'s {len(h.own)} own page(s) ({kept}) were not given back to the free list "
            f"(its row held {len(h.row)} page(s), the first {len(h.shared)} being its prefix hit).{where}",
            "a page reserved by schedule() for the next step is the request's too: give back every page of its "
            "row after its cached prefix (release() does)"
            if where
            else "its own pages are every page of its row after the prefix it was admitted with (req.prefix_len "
            "tokens), not after what the cache matches now (it may hold more of its prompt by now): release() knows",
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
    if others and got > evictable:
        raise Mistake(
            f"the prefix pages that {others} still reads became evictable ({got} evictable pages, expected "
            f"{evictable}): the cache may now evict K/V a running request reads",
            "a lock counts the requests reading a prefix: the aborted request gives up its own hold, once "
            "(release() does), and the others' stay",
        )
    assert got >= evictable, (
        f"{evictable - got} cached page(s) are still locked after the abort of uid {uid}, so they can never be "
        f"evicted. Hint: {RELEASE_HINT}"
    )
    assert got == evictable, f"{got} pages are evictable after the abort of uid {uid}, expected {evictable}"
    check_consistent(s)


def run_scheduled(s: Scheduler, batch, req) -> None:
    """Run the batch that was scheduled before the abort of `req`."""
    try:
        s.run_batch(batch)
    except Exception as e:
        check_status_kind(req)
        if req.status != ReqStatus.FINISHED:
            raise Mistake(
                f"run_batch() crashed ({type(e).__name__}: {e}) on the batch scheduled before your abort: it still "
                f"holds the request, which is not marked finished (req.status is {req.status}), so the engine ran it "
                "with its pages already freed. Hint: set req.status = ReqStatus.FINISHED",
                MARK,
            ) from None
        raise AssertionError(f"run_batch() crashed after your abort ({type(e).__name__}: {e})") from None


def check_other_intact(s: Scheduler, uid: int, where: str, row: list[int]) -> None:
    req = s.reqs.get(uid)
    assert req is not None, f"request {uid} (not aborted) left scheduler.reqs"
    queue = s.waiting if where == "waiting" else s.running
    assert req in queue, (
        f"request {uid}, which was not aborted, is no longer in scheduler.{where}: the abort took out the wrong "
        f"request. Hint: the aborted request is not necessarily the head of the queue; remove that request itself"
    )
    now = list(s.cache.page_table.pages[req.table_idx]) if req.table_idx >= 0 else []
    assert now[: len(row)] == row, f"request {uid}, which was not aborted, lost pages of its row: {row} -> {now}"


def state(s: Scheduler, req) -> dict:
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


SILENT = (
    "for a uid that is not in scheduler.reqs (never seen, finished, or aborted already), send nothing and change "
    "nothing: look the uid up first and return False before any scheduler.io.send"
)


def check_silent(s: Scheduler, what: str) -> None:
    """No message went out for an abort of a uid that is not live: the detokenizer forgot the uid
    with the request's last message, and a second finished message would be a stray one."""
    sent = [(m.uid, m.next_token, m.finished, m.finish_reason) for m in s.io.drain()]
    if sent:
        raise Mistake(
            f"{what} sent {len(sent)} message(s) to the detokenizer (uid, next_token, finished, finish_reason: "
            f"{sent}): the uid is not live, so the detokenizer has nothing to end (a finished or aborted request's last "
            "message already went out)",
            SILENT,
        )


def abort_again(s: Scheduler, uid: int, req, when: str) -> None:
    before = state(s, req)
    got = s.abort(uid)
    assert got is False, (
        f"the second abort of uid {uid} ({when}) must return False; your function returned {got!r}. Hint: after "
        "the first abort the uid is no longer live"
    )
    check_silent(s, f"the second abort of uid {uid} ({when})")
    after = state(s, req)
    changed = [k for k in before if before[k] != after[k]]
    if changed:
        raise Mistake(
            f"the second abort of uid {uid} ({when}) changed the scheduler's state: "
            + "; ".join(f"{k}: {before[k]} -> {after[k]}" for k in changed),
            "a uid that is not in scheduler.reqs is not yours to clean up any more: return False and change "
            "nothing; a release the first abort left waiting for a batch in flight finishes on its own",
        )
