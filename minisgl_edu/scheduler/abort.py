"""Abort: what the scheduler does with an `AbortBackendMsg`.

Where this sits on the request path: the client hung up, so the API server sent `AbortMsg`, the
tokenizer worker turned it into `AbortBackendMsg(uid)`, and the scheduler's `_process_msg` calls
`Scheduler.abort(uid)`, which calls `abort_request` below. The request may be anywhere:
still waiting (no memory yet), part-way through a chunked prefill (a page-table row and some
pages), or decoding. Wherever it is, it must disappear from every queue and give back every page
and its table row, or the server slowly runs out of memory.

Exercise 2 of the course replaces this function (see `Scheduler.abort_fn`).
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from minisgl_edu.core import Req, ReqStatus
from minisgl_edu.kvcache import CacheManager
from minisgl_edu.message import DetokenizeMsg
from minisgl_edu.scheduler.io import SchedulerIO


class AbortScope(Protocol):
    """The part of the scheduler an abort touches (the `Scheduler` is one)."""

    reqs: dict[int, Req]  # every live request by uid
    waiting: deque[Req]
    running: list[Req]
    cache: CacheManager
    io: SchedulerIO  # to tell the detokenizer the request is over


def abort_request(scheduler: AbortScope, uid: int) -> bool:
    """Remove `uid` everywhere and free its memory. False if it is not (or no longer) there."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False  # already finished, or never seen: nothing to do
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # Not cached: its full pages are as valid as a finished request's (a page only counts once
    # every token of it is computed), but this engine chooses to give all of its own pages back
    # to the free list; mini-sglang caches them (`_free_req_resources`). Shared prefix pages are
    # only unlocked and stay in the cache.
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    # The detokenizer and the API server still hold state for this uid: tell them it is over.
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
