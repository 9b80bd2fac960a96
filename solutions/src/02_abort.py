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

Whatever the case, it must leave `scheduler.reqs`, `scheduler.waiting` and `scheduler.running`;
`scheduler.cache.release(req, cache_it=False)` gives back its own pages and its row (and unlocks
any shared prefix it was using; its half-computed K/V must not go into the prefix cache); and the
detokenizer must hear that the request is over, with a `DetokenizeMsg(uid, -1, True, "abort",
stop)` sent through `scheduler.io.send([...])`, so that it frees its own state too. Return `True`
if you aborted something, `False` for a uid the scheduler does not know (it may have finished a
moment ago: that is normal, not an error).
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
prefill (the token budget is 16, so the prompt takes several steps), and while it decodes. After
each it checks that the free-page count and the free page-table rows are back where they started,
that the request is nowhere, and that the detokenizer got the `"abort"` message. It also checks
that aborting one request of three leaves the other two with exactly the tokens they would have
had.
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
