"""Probes for exercise 1's stretch (`finish_min_tokens`): the answer re-run on a few hand-made
requests around the minimum, to tell which min_tokens mistake it made, so that a hint names that
mistake and no other.

The hand cases (min_tokens.py) use the hints; the generated phase (scenes.py: reason_hint) uses the
probes and their hints. A probe that raises counts as "not this mistake".
"""

from __future__ import annotations

from typing import Any

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
