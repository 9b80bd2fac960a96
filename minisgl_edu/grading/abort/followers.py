"""Exercise 2's case for the first of n answers aborted while the others still wait for its prompt.

Where this sits: base.py lists `case_leader_with_followers` among its cases, and to_cache.py (the
stretch) among its own: the leader is aborted before it has a row, so it has computed nothing to cache. With n > 1 the
scheduler admits the other answers (`req.prompt_leader` set) only once the first answer's prompt
is computed; an abort of that first answer ends that uid only. The API server sends one abort per
uid it wants ended, and `prompt_sharing.waits` lets a follower whose leader is gone be admitted like
any request. An answer that also aborts the requests whose `prompt_leader` is the aborted one ends
requests nobody asked to end. Other mistakes can also take a second request out (the head of the
queue popped, say), so the hint names this one only after a probe of its own: on a fresh scheduler
a leader, its follower and an unrelated request wait; the leader is aborted; the mistake is named
only when the follower alone went with it.
"""

from __future__ import annotations

from minisgl_edu.grading.abort.checks import GREEDY, OTHER, SHORT, abort, check_gone, engine_step, start
from minisgl_edu.grading.abort.probes import probe_uid, scheduler_with
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.harness import encode, remember
from minisgl_edu.scheduler.abort import abort_request as reference

FOLLOWERS_ABORTED = (
    "abort ends the uid it is given and no other: the other answers to the same prompt (whose "
    "req.prompt_leader is the aborted request) stay live; they are admitted like any request once their "
    "leader is gone. Do not abort the requests whose prompt_leader is the aborted one"
)


def aborts_followers(fn) -> bool:
    """`fn`, aborting a waiting leader, also takes out its waiting follower and nothing else."""
    s = scheduler_with(fn)
    leader, follower, other = (probe_uid() for _ in range(3))
    waiting(s, leader, 5)
    s.add_request(follower, list(s.reqs[leader].input_ids), s.reqs[leader].sampling_params, prompt_leader=leader)
    waiting(s, other, 5)
    try:
        s.abort(leader)
    except Exception:
        return False  # some other mistake: the hint of the failed check names it
    return follower not in s.reqs and other in s.reqs and leader not in s.reqs


def _leader_aborted(fn) -> tuple[object, list[int]]:
    """Answers 3 and 4 to one prompt (4 waits for 3's prompt) and request 5; abort 3 before any step."""
    s = start(fn)
    s.add_request(3, encode(s, OTHER), GREEDY)
    s.add_request(4, encode(s, OTHER), GREEDY, prompt_leader=3)
    s.add_request(5, encode(s, SHORT), GREEDY)
    assert s.reqs[4].prompt_leader is s.reqs[3], "setup: request 4 should wait for request 3's prompt"
    abort(s, 3)
    return s, [r.uid for r in s.waiting]


def _then_finish(fn) -> list[int]:
    s, _ = _leader_aborted(fn)
    s.run_until_idle()
    return [m.next_token for m in s.io.drain() if m.uid == 4 and m.next_token >= 0]


def case_leader_with_followers(fn):
    s, left = _leader_aborted(fn)
    check_gone(s, 3)
    if 4 not in s.reqs or 4 not in left:
        what = f"request 4 (the second answer to request 3's prompt, not aborted) is gone: scheduler.waiting {left}"
        if aborts_followers(fn):
            raise Mistake(
                f"{what}. Your abort, on a scheduler of its own, also took out the request waiting for the aborted "
                "one's prompt (prompt_leader), and only that one",
                FOLLOWERS_ABORTED,
            )
        raise Mistake(what, "touch only the aborted request: every other request stays where it was")
    s.io.drain()
    engine_step("request 4, whose leader was aborted", s.run_until_idle)
    got = [m.next_token for m in s.io.drain() if m.uid == 4 and m.next_token >= 0]
    want = remember("abort: leader with followers", lambda: _then_finish(reference))
    assert got == want, f"request 4, whose leader was aborted, produced {got}, expected {want}"
    assert s.cache.num_available == s.cache.num_pages, "pages are missing after all requests ended"
