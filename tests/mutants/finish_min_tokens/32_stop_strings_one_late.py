"""From the minimum on it uses check_finish, but at exactly the min_tokens-th token it passes
decode=None ("the stop strings are looked at from the next token"), so a stop string completed by
the min_tokens-th token is only seen one token later. The contract: from the min_tokens-th output
token on, check_finish's rules apply unchanged, stop strings included."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: stop strings wait too", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "the stop string completes at output token 3 and min_tokens=3: it finishes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "< min_tokens holds back, == min_tokens does not"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
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
    return check_finish(req, eos_ids, decode if n > min_tokens else None)
