from cells import code, md

CELLS = [
    md("""
# Exercise 2 — Cancelling a request

**Goal:** write what the scheduler does when a client goes away. **Time:** about 25 minutes.

When a streaming client disconnects, the API server sends `AbortMsg(uid)` to a tokenizer
worker, which forwards `AbortBackendMsg(uid)` to the scheduler. `Scheduler._process_msg` calls
`Scheduler.abort(uid)`, which calls `self.abort_fn(self, uid)`: your function,
`abort_request(scheduler, uid) -> bool`. The package's own version is `abort_request` in
`minisgl_edu/scheduler/abort.py`; don't read it before you try.

The request can be anywhere in its life:

| where | what it holds |
|---|---|
| waiting, not admitted | nothing yet (`req.table_idx == -1`) |
| waiting, part-way through a chunked prefill | a page-table row and the pages of the chunks done so far |
| running (decoding) | a row and pages for every token so far |
| in a batch that `schedule()` chose and `run_batch()` has not run yet | the same, plus a page `schedule()` may have reserved for the token that batch computes |
| in a batch in flight (the overlap loop computes it while messages arrive) | the same; the GPU may still write its pages |

## The contract

After `abort_request(scheduler, uid)` returns `True`:

* **Where the request is not.** In none of `scheduler.reqs` (the live requests by uid),
  `scheduler.waiting` (a first-come-first-served `deque`; its head may be part-way through a
  chunked prefill, and the aborted request need not be the head) and `scheduler.running`. Every
  other request stays where it was, in the same order, with its row and pages untouched, and goes on
  to produce exactly the tokens it would have produced.
* **What it is marked.** `req.status == ReqStatus.FINISHED` and `req.finish_reason == "abort"`. A
  batch chosen before the abort may still list the request: the course's stepper (chapter 04) picks
  the next batch before you press the button, and the overlap loop has one in flight. `run_batch`
  and the overlap loop skip requests that are finished, and compute any other with whatever its row
still holds.
* **What the detokenizer is told.** Exactly one message, through `scheduler.io.send([...])`: a
  `DetokenizeMsg` with the request's `uid`, `next_token=-1` (no token: a real id would be
  detokenized and shown to the client), `finished=True`, `finish_reason="abort"` and `stop`, the
  request's stop strings (`list(req.sampling_params.stop)`). On it the detokenizer and the API
  server drop what they hold for the uid.
* **Where every page and the row go** (pages of 4 tokens in the grader; a row lists the request's
  pages in token order):

| what the request held | after the abort |
|---|---|
| its own pages: every page of its row after the prefix it was admitted with (`req.prefix_len` tokens; for the first of `n` answers to one prompt, which hands its prompt's pages to the cache, `req.shared_len` if larger), full, partly written, or reserved by `schedule()` for a step that has not run | on the allocator's free list, each exactly once |
| the pages of its cached prefix (the row's pages before those), perhaps read by other running requests too | in the prefix cache, never on the free list; the request's hold on them (a lock, counted per request) given up once: still locked while another running request holds them, evictable when nobody does |
| its page-table row | free |
| the prefix cache | holds exactly the pages it held before: this engine does not cache an aborted request |

So the free count goes up by exactly the number of the request's own pages, and
`scheduler.cache.check()` (every page free, in a row, or in the prefix cache, exactly once)
still holds.

* **A batch in flight.** On the overlap loop the request leaves the queues and is marked at once,
  but none of its pages goes back to the free list before the batch that holds it lands; then they
  all do.

It returns `True` when the uid was live and is now aborted, and `False` for a uid the scheduler
does not know: never seen, finished a moment ago (that is normal: a client often hangs up just as
its answer ends, so it is not an error), or already aborted. For those nothing changes at all and
nothing is sent.

`scheduler.cache` is the cache manager (`minisgl_edu/kvcache/manager.py`, which you may read and
use): it knows which pages of a row are a request's own and which are the prefix cache's, and how
to wait for a batch in flight. Your answer must be your own code: calling or wrapping the
package's `abort_request` scores 0.

mini-sglang puts an aborted request's full, computed pages into its radix cache; this engine gives
all of its own pages back to the free list. Both are valid choices (chapter 08 weighs them); the
stretch part at the end of this notebook does it mini-sglang's way.
"""),
    code("""
from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.grading import check
from minisgl_edu.message import DetokenizeMsg
"""),
    code('''
def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
'''),
    md("""
## Check your answer

The grader aborts a real request (default model, pages of 4) while it waits, in the middle of a
chunked prefill (the token budget is 16, so the prompt takes several steps), while it decodes,
between `schedule()` and `run_batch()`, while its batch is in flight on the overlap loop, and after
its prompt reused a prefix that an earlier request left in the radix cache. Then the edges: a
prompt whose cached prefix another running request still reads; a 33-token prompt aborted when its
computed tokens fill their last page exactly and one token later, each between two steps and
after `schedule()`; two queued requests and two requests on one cached prefix, each pair aborted in
both orders; an abort after ten requests filled a small pool and the cache evicted pages, on a
prefix that another request extended in the cache meanwhile; and the same uid aborted twice
(decoding, waiting, in flight). It also aborts unknown and finished uids, and checks that aborting
one request of three leaves the other two with exactly the tokens they would have had.

After each abort it checks the contract above: the request is nowhere and marked finished, the
detokenizer got one `"abort"` message, the free count went up by exactly the request's own pages,
the prefix cache kept its pages and the locks other requests hold, every row is free, and
`cache.check()` holds. A failure says what your function left behind, and a hint follows.

Each case has a time limit, so an answer that loops fails that case instead of hanging the
notebook.
"""),
    code("""
result = check("abort", abort_request)
"""),
    md("""
## Stretch: cache what the aborted request computed (mini-sglang's choice)

mini-sglang frees an aborted request exactly as it frees a finished one: `_free_req_resources`
(`scheduler/scheduler.py`) frees the request's table row and calls `cache_req(req, finished=True)`,
which inserts the request's first `cached_len` tokens, cut down to whole pages
(`RadixCache.insert_prefix` aligns the length down to the page size), frees the pages that the
cache already held for those tokens, and frees the tail. SGLang gets there another way: a running
request that is aborted is marked `to_abort`, its next `check_finished` ends it with
`FINISH_ABORT`, and it leaves through the finished path (`tree_cache.cache_finished_req`); a
request still in the waiting queue is simply removed. Either way a client that retries the same
prompt, or resends the conversation so far, reuses what the aborted request had computed.

Write `abort_request_to_cache(scheduler, uid) -> bool`. The whole contract of the base part still
holds: the request leaves `scheduler.reqs`, `waiting` and `running`, is marked finished with
`"abort"`, the detokenizer gets one `DetokenizeMsg(uid, -1, True, "abort", stop)`, its row is
freed, it returns `True` or `False` as before, and a batch scheduled before the abort or still in
flight must not be harmed. What changes is where its pages go:

* **Only computed tokens count**: the first `req.cached_len` tokens of `req.all_ids`, whose K/V is
  written in the pool. The newest sampled token is not one of them (its K/V is computed by the
  next step, which an aborted request never gets), nor is the part of a prompt whose chunks have
  not run, nor a page that `schedule()` reserved for a batch that has not run yet.
* **Whole pages only**: the full pages of those tokens go into `scheduler.cache.prefix_cache`,
  filed under their tokens, so that a new request starting with the same tokens gets them as its
  prefix hit (`cached_tokens`). A last page that is only partly computed goes to the free list.
* **Nothing twice**: pages that the cache already holds for the same tokens (the request's own
  prefix hit, the prompt pages that the first of `n` answers to one prompt handed to the cache after
  its prefill, `req.shared_len` tokens, or another request's copy of the same text) stay the cache's;
  the request's copies go to the free list. The request's lock on its cached prefix is released
  exactly once: another request may still be reading the same prefix.
* **Nothing to cache**: a request still waiting without a row has computed nothing; with the naive
  cache (`cache="naive"`, which keeps nothing) every page of the request goes to the free list.
* On the overlap loop no page goes back to the free list while the request's batch is in flight.

Afterwards `scheduler.cache.check()` holds (every page is free, in a row, or in the prefix cache,
exactly once), and once every request is over, every page is free or evictable. You may use the
cache manager and the prefix cache; calling or wrapping the package's `abort_request` is not an
answer.

`check` grades it on its own score line, `abort_to_cache`, with the real engine (page size 4). It
aborts a decoding request whose computed tokens end inside a page, exactly at the end of one, and
one slot short of the end (the newest token would fill it); a request part-way through a chunked
prefill; a waiting request and unknown or finished uids; requests between `schedule()` and
`run_batch()` (a decode step, and a first prompt chunk after a prefix hit); a request whose batch is
in flight on the overlap loop, one whose last prompt chunk is (no token sampled yet); a request that
shares its cached prefix with a request still running; the first of two answers to one prompt,
aborted while the second still decodes; and requests under the naive cache. After each abort it
checks which tokens the prefix cache holds along the request's ids, which pages it took, the free
count and the locks, then sends a new request that should reuse exactly the pages cached.
"""),
    code('''
def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # A finished request's path fits an aborted one: release() inserts all_ids[:cached_len] in
    # whole pages, frees the duplicates of pages the cache already had and the partial tail,
    # unlocks the prefix once, caches nothing under the naive cache, and waits for a batch in
    # flight. cached_len never counts the newest sampled token, nor a chunk or page not yet run.
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
'''),
    code("""
result_stretch = check("abort_to_cache", abort_request_to_cache)
"""),
    md("""
## Going further

* On a GPU with overlap scheduling, the batch that contains the aborted request may already be
  running. Why must its pages then wait before going back to the free list? (Chapter 09.)
* What would happen over a day of traffic if `release` were forgotten for the mid-prefill case?
* mini-sglang advances `cached_len` as soon as a forward pass is queued (`Req.complete_one` in
  `Engine.forward_batch`), so an abort that lands while the batch runs caches the token that batch
  is computing. This engine counts a decode token only when its batch lands. Why is each safe?
"""),
]
