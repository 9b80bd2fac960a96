from cells import code, md

CELLS = [
    md("""
# Exercise 2 — Cancelling a request

**Goal:** write what the scheduler does when a client goes away. **Time:** about 25 minutes.

When a streaming client disconnects, the API server sends `AbortMsg(uid)` to a tokenizer
worker, which forwards `AbortBackendMsg(uid)` to the scheduler. `Scheduler._process_msg` calls
`Scheduler.abort(uid)`, which calls `self.abort_fn(self, uid)`: your function. The request can be
in any of three places:

| where | what it holds |
|---|---|
| waiting, not admitted | nothing yet (`req.table_idx == -1`) |
| waiting, part-way through a chunked prefill | a page-table row and the pages of the chunks done so far |
| running (decoding) | a row and pages for every token so far |

Whatever the case, it must:

1. leave `scheduler.reqs`, `scheduler.waiting` and `scheduler.running`;
2. give back its own pages and its row with `scheduler.cache.release(req, cache_it=False)`. That
   also unlocks a cached prefix the request was reading: the first pages of its row may belong to
   the prefix cache and be shared with other requests, so never free the row's pages by hand;
3. be **marked finished**: `req.status = ReqStatus.FINISHED` and `req.finish_reason = "abort"`.
   An abort can land between `scheduler.schedule()` and `scheduler.run_batch(batch)`: the
   course's stepper (chapter 04) picks the next batch before you press the button, and on the
   overlap loop a batch is in flight while messages arrive. That batch still holds the request;
   `run_batch` (and the overlap loop) skip requests that are finished, but one that is not would
   be computed with its pages and row already gone;
4. tell the detokenizer, with a `DetokenizeMsg(uid, -1, True, "abort", stop)` sent through
   `scheduler.io.send([...])`, so that it and the API server free their state for the uid.

Return `True` if you aborted something, `False` for a uid the scheduler does not know (it may
have finished a moment ago: that is normal, not an error) and then send nothing.

Only full pages whose K/V was computed can ever go into a prefix cache. mini-sglang does insert an
aborted request's full, computed pages into its radix cache; this engine does not cache an aborted
request at all (`cache_it=False`): all its own pages go back to the free list.
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
    ### HINT: pop it from scheduler.reqs, remove it from waiting/running, release the cache, tell the detokenizer
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

The grader aborts a real request (default model) while it waits, in the middle of a chunked
prefill (the token budget is 16, so the prompt takes several steps), while it decodes, between
`schedule()` and `run_batch()`, while its batch is in flight on the overlap loop, and after its
prompt reused a prefix that an earlier request left in the radix cache. After each it checks that
the request is nowhere and (where it matters) marked finished, that the detokenizer got one
`"abort"` message, and that every page is back where it belongs (the free list, or the prefix
cache for the shared ones) and every row is free. It also aborts unknown and finished uids, and
checks that aborting one request of three leaves the other two with exactly the tokens they would
have had. Each failure says what your function left behind.

Each case has a time limit, so an answer that loops fails that case instead of hanging the
notebook; and the answer must be your own code (calling the package's `abort_request` scores 0).
"""),
    code("""
result = check("abort", abort_request)
"""),
    md("""
## Going further

* On a GPU with overlap scheduling, the batch that contains the aborted request may already be
  running. Why must its pages then wait before going back to the free list? (Chapter 09.)
* What would happen over a day of traffic if `release` were forgotten for the mid-prefill case?
"""),
]
