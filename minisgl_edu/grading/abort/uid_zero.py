"""Exercise 2 (and its stretch): uid 0 taken for "no uid".

An abort guarded with `if not uid` (or `if uid and ...`) turns uid 0 away: 0 is falsy, yet it is a
real uid (the scheduler numbers requests from 0, so it is every server's first request). It returns
False for uid 0 and True for any other uid, whatever the request held, so the return-value hint that
blames the request's state (checks.abort, scenes._returned) would send the student the wrong way.

Here: the probe that tells it by behaviour (two fresh schedulers, one decoding request each in the
same state, uid 0 on one and uid 1 on the other), the Mistake a hand case raises, and the wrapper
the generated phase puts around its "returned" hint. Both come before the held-a-row hint.
"""

from __future__ import annotations

from typing import Any, Callable

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.explore import Difference
from minisgl_edu.grading.fixtures import decoding, modelless, token_ids

UID_ZERO = (
    "your abort returns True for uid 1 but not for uid 0 in the same state: uid 0 is a real uid (the scheduler numbers requests from 0) and it is falsy, so `if not uid` (or "
    "`if uid and ...`) turns it away: test only `uid not in scheduler.reqs` (or `scheduler.reqs.pop(uid, None) "
    "is None`) to tell a uid that is not live"
)

_PROMPT = token_ids(6, 5)  # the same prompt for both uids: only the uid differs


def _returns(fn: Any, uid: int) -> Any:
    """What `fn` returns aborting the decoding request `uid` on a fresh modelless scheduler (None when it raises)."""
    s = modelless()
    s.abort_fn = fn
    decoding(s, uid, list(_PROMPT))
    try:
        return s.abort(uid)
    except Exception:
        return None


def turns_uid_zero_away(fn: Any) -> bool:
    """`fn` returns True aborting uid 1 and anything else aborting uid 0, each a decoding request in the same
    state on a fresh scheduler: it takes uid 0 for "no uid"."""
    try:
        return _returns(fn, 1) is True and _returns(fn, 0) is not True
    except Exception:
        return False  # the setup failed: the failed check's own hint stands


def uid_zero_mistake(got: object) -> Mistake:
    return Mistake(
        f"aborting a live request (uid 0) must return True; your function returned {got!r}. Given two fresh "
        "schedulers, each with one decoding request in the same state, your abort returns True for uid 1 and "
        f"{got!r} for uid 0: it is the uid, not the request's state, that it turns away",
        UID_ZERO,
    )


def or_uid_zero(hint: Callable[[Any, Difference], str], answer: list) -> Callable[[Any, Difference], str]:
    """The generated phase's "returned" hint, with UID_ZERO first where uid 0's abort should have returned True
    and the probe shows the answer turns uid 0 away."""

    def named(scene: Any, diff: Difference) -> str:
        if diff.expected is True and "(uid 0)" in diff.field and answer and turns_uid_zero_away(answer[0]):
            return UID_ZERO
        return hint(scene, diff)

    return named
