"""Aborts the request and, with it, every request that waits for its prompt (`r.prompt_leader is req`,
the other answers of an n > 1 request), reasoning that "they belong to the same client, and they
would wait for the leader's prompt pages forever". abort_request_to_cache(uid) ends that uid only: the
API server sends one abort per uid it wants ended, and the other answers go on (their admission no
longer needs the aborted leader's pages), so aborting them ends requests nobody asked to end. Two
answers to one prompt and the first aborted before any step: the reference leaves uid 4 live, this
answer removes it. Otherwise the stretch's solution: computed full pages go to the prefix cache."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: abort the first of n answers while the others wait"}
MUST_SAY = "also took out the request waiting for the aborted one's prompt"
CAUGHT_BY = {"hand"}
HINT_SAYS = "Do not abort the requests whose prompt_leader is the aborted one"


def _abort_one(scheduler, req) -> None:
    scheduler.reqs.pop(req.uid, None)
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # A finished request's path fits an aborted one: release() inserts all_ids[:cached_len] in
    # whole pages, frees the duplicates and the partial tail, and unlocks the prefix once.
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(req.uid, -1, True, "abort", list(req.sampling_params.stop))])


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.get(uid)
    if req is None:
        return False
    followers = [r for r in scheduler.reqs.values() if r.prompt_leader is req]  # still waiting for its prompt
    _abort_one(scheduler, req)
    for r in followers:  # the other answers of the same prompt: same client
        _abort_one(scheduler, r)
    return True
