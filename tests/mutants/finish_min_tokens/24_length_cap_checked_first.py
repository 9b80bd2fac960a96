"""Tests the hard length cap first, for every token, before the minimum and before check_finish
("the length limit is a hard cap, whatever else holds"). Below min_tokens that is right, but from
the minimum on check_finish decides unchanged, and it tests EOS and the stop strings before the
length: when the last allowed token is an EOS or completes a stop string, the model ended the answer
itself and the reason is 'stop'. This answer says 'length' for such a token."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "with the limit far away it returns 'stop'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test 'stop' before 'length'"


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
    if n >= req.max_new_tokens:
        return "length"  # the hard cap, whatever else holds
    if n < min_tokens:
        return None
    return check_finish(req, eos_ids, decode)
