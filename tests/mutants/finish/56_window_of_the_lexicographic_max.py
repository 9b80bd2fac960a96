"""Sizes the decode window by `max(sp.stop)`, meant as the longest stop string, but max() of strings is the
one that sorts last alphabetically. With stop=['}', 'two three four five six seven'] the window holds
len('}') + 4 = 5 tokens, too few for the long stop string (6 tokens), which then never ends the request."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"the longest stop string sets the window"}
MUST_SAY = "its window follows max(stop), the alphabetically last"
CAUGHT_BY = {"hand"}
HINT_SAYS = "max() of strings is the one that sorts last alphabetically"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = len(max(sp.stop).encode("utf-8")) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    n = len(req.output_ids)
    if n < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
