"""Exercise 5's stretch: above LPM_MAX_WAITING, the waiting requests are not matched at all.

The threshold exists because matching every waiting request against the prefix cache each step
costs too much (SGLang stops at 128): above it the order is first come, first served, and the only
matches are those of the requests admission reaches (`cache.admit` matches the one it admits). A
match is not free of effects either: it marks the cached pages it reaches as just used, and the
prefix cache evicts the least recently used first. An answer that works out every request's key
first and decides only then whether to sort gets the right order, but the prefix a queued request
merely shares now looks recently used and outlives others.

`check_fcfs_leaves_the_cache(fn, n)` plays n + 1 waiting requests, the last sharing the older of two
cached prefixes, A and B: after a first-come-first-served step, A is still the least recently used,
so `evict(1)` frees A's pages. When the answer's step frees B's instead, a spy on `cache.match` and
`cache.admit` confirms the cause: a request was matched that admission never reached.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, decide_in_order, lpm_sched

MATCHED_ABOVE_HINT = (
    "when more than LPM_MAX_WAITING requests wait, do not call scheduler.cache.match at all: decide "
    "whether to sort first, and match only when you sort. A match marks the cached prefix it finds as "
    "just used, so matching requests you then take first come, first served changes which prefix the "
    "cache evicts next (and matching the whole queue every step is the cost the threshold skips)"
)


def _scene(n: int):
    """n + 1 waiting requests: n with nothing cached, then one sharing prefix A; A was cached (and
    last used) before B, so A is the least recently used. Returns the scheduler and A's and B's pages."""
    s = lpm_sched()
    a = cached(s, token_ids(8, 100))  # 2 pages of 4
    a_pages = s.cache.prefix_cache.match_prefix(a)[1]
    for uid in range(n):
        add_waiting(s, uid, token_ids(5, 20 + uid), pages=0)
    add_waiting(s, n, a + token_ids(3, 40), pages=2)  # this setup check's own match uses A: before B
    b = cached(s, token_ids(8, 200))  # B, newer than A
    b_pages = s.cache.prefix_cache.match_prefix(b)[1]
    return s, a_pages, b_pages


class _MatchSpy:
    """Records, on `s.cache`, the requests matched and the requests passed to admit."""

    def __init__(self, s):
        self.cache, self.matched, self.admitted = s.cache, set(), set()
        match, admit = s.cache.match, s.cache.admit

        def spied_match(req, *args, **kwargs):
            self.matched.add(req.uid)
            return match(req, *args, **kwargs)

        def spied_admit(req, *args, **kwargs):
            self.admitted.add(req.uid)
            return admit(req, *args, **kwargs)

        self.cache.match, self.cache.admit = spied_match, spied_admit

    def remove(self) -> None:
        del self.cache.match, self.cache.admit


def check_fcfs_leaves_the_cache(fn, n: int) -> None:
    """After a step above the threshold, the cache's least recently used prefix is still A."""
    s, a_pages, b_pages = _scene(n)
    spy = _MatchSpy(s)
    try:
        decide_in_order(fn, s)
    finally:
        spy.remove()
    freed = s.cache.prefix_cache.evict(1)
    if sorted(freed) != sorted(b_pages):
        return  # A went first (or something else this check does not look at): the order was left alone
    unreached = sorted(spy.matched - spy.admitted)
    if not unreached:
        return
    raise Mistake(
        f"{n + 1} requests wait, more than LPM_MAX_WAITING = {n}, so the step is first come, first served, "
        f"and request {n} (whose prompt shares cached prefix A, pages {sorted(a_pages)}) is far from admission. "
        f"Your step still matched request(s) {unreached} against the cache, which it never admitted: that "
        f"marked A as just used, so evict(1) afterwards freed B {sorted(b_pages)}, cached after A, instead of A, "
        "the least recently used",
        MATCHED_ABOVE_HINT,
    )
