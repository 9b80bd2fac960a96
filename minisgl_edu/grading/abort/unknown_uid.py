"""Grader for exercise 2 (abort) and its stretch: the case of a uid that is not live.

Where this sits: base.py and to_cache.py both run `case_unknown_uid`; scenes.py shows NOT_LIVE as the
hint of a generated scene whose abort returned the wrong value for such a uid. Each check here carries
NOT_LIVE itself, because the case that runs it may be another's (abort_to_cache's "nothing to cache"
case), whose own hint names a different mistake.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.abort.checks import GREEDY, SHORT, abort, check_silent, engine_step, start
from minisgl_edu.grading.core import expect
from minisgl_edu.grading.harness import encode

NOT_LIVE = (
    "return False, and change nothing, for a uid that is not live: never seen, finished a moment ago, "
    "or aborted already (it left scheduler.reqs)"
)


def case_unknown_uid(fn):
    s = start(fn)
    got = s.abort(12345)
    expect(
        got is False,
        f"aborting a uid the scheduler never saw must return False; your function returned {got!r}. A uid "
        "is live while it is a key of scheduler.reqs",
        NOT_LIVE,
    )
    check_silent(s, "aborting a uid the scheduler never saw")
    s.add_request(0, encode(s, SHORT), SamplingParams(max_tokens=1))
    engine_step("a one-token request", s.run_until_idle)
    s.io.drain()
    got = s.abort(0)
    expect(
        got is False,
        f"request 0 already finished (a client often hangs up just then): abort must return False, "
        f"your function returned {got!r}. A finished request has left scheduler.reqs",
        NOT_LIVE,
    )
    check_silent(s, "aborting request 0, which already finished (the client has its answer),")
    s.add_request(1, encode(s, SHORT), GREEDY)
    abort(s, 1)
    s.io.drain()
    got = s.abort(1)
    expect(
        got is False,
        f"the second abort of the same request must return False; your function returned {got!r}",
        NOT_LIVE,
    )
    check_silent(s, "the second abort of request 1")
