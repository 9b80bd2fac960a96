"""Ends with "length" one token early: `len(req.output_ids) + 1 >= req.max_new_tokens`, reasoning
that the check must leave room for the token the next step would compute ("the next token would be
one too many"). The check runs after the newest token was appended, and the request may have
max_new_tokens output tokens: with max_new_tokens = 8 this answer ends the request at 7 tokens
("length") where the reference returns None, so every request that runs into its limit gets one
token fewer than max_tokens (and a request with max_tokens=1 still gets its one token, since the
first check already happens after it)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"max_tokens finishes with 'length'"}
MUST_SAY = "one more token is allowed"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "reaches req.max_new_tokens, not a token before"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) + 1 >= req.max_new_tokens:  # leave room: the next token would be one too many
        return "length"
    return None
