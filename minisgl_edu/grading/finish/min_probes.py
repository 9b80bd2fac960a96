"""Probes for exercise 1's stretch (`finish_min_tokens`): the answer re-run on a few hand-made
requests around the minimum, to tell which min_tokens mistake it made, so that a hint names that
mistake and no other.

The hand cases (min_tokens.py) use the hints; the generated phase (scenes.py: reason_hint) uses the
probes and their hints. A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import replace
from typing import Any, Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _ids, _req

EOS_COUNTS = (
    "every output token counts toward min_tokens, EOS tokens too: count len(req.output_ids), not the tokens "
    "that are not EOS"
)

STOP_NOT_SPENT = (
    "from min_tokens on, check_finish's stop-string test applies unchanged: a stop string the decoded window "
    "shows finishes the request, also one that completed while min_tokens held it back (not only one the "
    "newest token completes)"
)


def held_back_stop_spent(fn: Any) -> bool:
    """The answer misses a stop string held back before the minimum that the window still shows
    (stop 'two three', min_tokens=4, output 'one two three four five'), yet finds one that begins
    before the minimum and that the newest token completes: it takes a held-back stop string as spent."""
    ids = _ids("one two three four five")
    try:
        spent = fn(_req(ids, stop=["two three"]), set(EOS), _decode, 4) is None
        return spent and fn(_req(ids[:3], stop=["one two three"]), set(EOS), _decode, 2) == "stop"
    except Exception:
        return False


def held_back_eos_not_counted(fn: Any) -> bool:
    """The answer holds back an EOS that is the 6th output token with min_tokens=5, one of the five
    before it a held-back EOS: it counts only the tokens that are not EOS toward the minimum."""
    try:
        return fn(_req([PLAIN, 2, PLAIN, PLAIN, PLAIN, 2]), set(EOS), _decode, 5) is None
    except Exception:
        return False


HIDDEN_EOS_LENGTH = (
    "an EOS held back before min_tokens is still an output token, and the length limit counts it: from the "
    "minimum on, hand check_finish the request itself, len(req.output_ids) as it is; do not hide held-back EOS "
    "ids from the check (with k of them hidden, the request runs k tokens past req.max_new_tokens)"
)


def hides_held_back_eos(fn: Any) -> bool:
    """The answer returns 'length' for 3 ' ok' tokens of max 3 with min_tokens=2, yet None for
    [EOS, ' ok', ' ok'] (the EOS held back): its length test leaves out the EOS the minimum held back."""
    try:
        plain = fn(_req([PLAIN] * 3, max_new=3), set(EOS), _decode, 2)
        return plain == "length" and fn(_req([2, PLAIN, PLAIN], max_new=3), set(EOS), _decode, 2) is None
    except Exception:
        return False


UNREACHABLE_MIN = (
    "a min_tokens the length limit never lets the request reach still holds EOS and stop strings back, all the way "
    "to the limit: the request ends with 'length' (never drop the minimum)"
)


def drops_unreachable_min(fn: Any) -> bool:
    """The answer lets an EOS (the 2nd output token) finish a request whose min_tokens=10 is above its
    req.max_new_tokens=3, yet holds it back when req.max_new_tokens=50: it drops a minimum above the limit."""
    try:
        return [fn(_req([PLAIN, 2], max_new=limit), set(EOS), _decode, 10) for limit in (3, 50)] == ["stop", None]
    except Exception:
        return False


def ends_unreachable_min(fn: Any) -> bool:
    """The answer returns 'length' for 1 output token of max 3 when min_tokens=10 is above the limit, yet
    None for the same output with min_tokens=0: it ends a request with an unreachable minimum at once."""
    try:
        return [fn(_req([PLAIN], max_new=3), set(EOS), _decode, m) for m in (10, 0)] == ["length", None]
    except Exception:
        return False


STATE_KEPT = (
    "state kept between calls outside the request (keyed by uid or anything else): keep nothing between calls, "
    "everything you need is on req (len(req.output_ids), req.sampling_params) and in the arguments; the answer "
    "must depend on them alone, whatever was called before"
)
_UNSEEN_UIDS = itertools.count(10**9)  # uids no case or scene uses


def kept_between_calls(fn: Any, req: Req, min_tokens: int, want: Any, got: Any) -> Optional[str]:
    """Where the answer returned `got` for req (the reference: `want`), returns `got` again on a copy of
    req, yet `want` on the same copy under a uid no call used before: it keeps something between calls
    keyed by the uid. What it did, as a sentence; None otherwise."""

    def copied(uid: int) -> Req:
        return replace(
            req, uid=uid, output_ids=list(req.output_ids), sampling_params=copy.deepcopy(req.sampling_params)
        )

    try:
        again = fn(copied(req.uid), set(EOS), _decode, min_tokens)
        unseen = fn(copied(next(_UNSEEN_UIDS)), set(EOS), _decode, min_tokens)
    except Exception:
        return None
    if got == want or again != got or unseen != want:
        return None
    return (
        f"called on the same request under a uid no call used before, your check returns {unseen!r}, the right "
        f"answer, but under uid {req.uid}, which earlier calls used, it returns {got!r}: it remembers something "
        "from earlier calls"
    )


ONE_TOO_FEW = (
    "the (min_tokens - 1)-th token is still below the minimum: while len(req.output_ids) < min_tokens "
    "(not min_tokens - 1), an EOS does not finish the request"
)


def holds_back_one_too_few(fn: Any) -> bool:
    """The answer, on requests under uids no call used before, lets an EOS that is the 4th output token
    finish with min_tokens=5, yet holds back one that is the 3rd: its minimum is one token short."""
    try:
        fourth, third = (
            fn(replace(_req([PLAIN] * n + [2]), uid=next(_UNSEEN_UIDS)), set(EOS), _decode, 5) for n in (3, 2)
        )
    except Exception:
        return False
    return fourth == "stop" and third is None


EOS_IDS_CHANGED = (
    "eos_ids is the scheduler's own set, passed to every call for every request: do not change eos_ids in place "
    "(eos_ids -= ..., .clear(), .discard() change the set itself, not just your name for it). Below min_tokens hold "
    "the EOS back by what you return, or give check_finish a new set (set()), never by emptying the caller's"
)


def one_set_two_requests(fn: Any) -> tuple[Any, list[int], Any]:
    """One eos_ids set passed to two calls, as the scheduler passes its own: request A (output ' ok' + the EOS 2,
    min_tokens=5, held back), then request B (4 output tokens, the newest the EOS 2, min_tokens=2, 'stop').
    (A's answer, the set after it, B's answer); both requests under uids no call used before."""
    eos = set(EOS)
    held = fn(replace(_req([PLAIN, 2]), uid=next(_UNSEEN_UIDS)), eos, _decode, 5)
    after = sorted(eos)
    return held, after, fn(replace(_req([PLAIN] * 3 + [2]), uid=next(_UNSEEN_UIDS)), eos, _decode, 2)


def eos_ids_changed(fn: Any) -> Optional[list[int]]:
    """The eos_ids set after the answer held back an EOS below the minimum (output ' ok' + EOS 2,
    min_tokens=5), when that call changed it (None when it left it as it was, or raised)."""
    eos = set(EOS)
    try:
        fn(replace(_req([PLAIN, 2]), uid=next(_UNSEEN_UIDS)), eos, _decode, 5)
    except Exception:
        return None
    return None if eos == set(EOS) else sorted(eos)
