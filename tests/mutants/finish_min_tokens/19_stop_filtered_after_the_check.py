"""Calls check_finish first and then filters its answer: below min_tokens a "stop" becomes None ("an
EOS or a stop string is held back"), any other answer passes. But check_finish answers "stop" when
the last allowed token is also an EOS or completes a stop string ("stop" wins over "length"), so
when that coincidence happens below min_tokens the filter turns it into None and the length limit
is lost: the request runs past max_new_tokens. The contract: below min_tokens only the length
limit can finish the request, and if min_tokens is above req.max_new_tokens the request ends with
"length". Differs e.g. with min_tokens=10, max_new_tokens=3 and output [a, b, EOS]: the reference
answers "length", this answer None."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "holds the EOS back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the length even when you hold a 'stop' back"


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
    reason = check_finish(req, eos_ids, decode)
    if reason == "stop" and len(req.output_ids) < min_tokens:
        return None  # too early: an EOS or a stop string is held back
    return reason
