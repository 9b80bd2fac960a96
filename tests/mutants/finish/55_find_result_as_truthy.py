"""Tests each stop string with `tail.find(s)` used as a truth value, as if find returned whether the string
is there. str.find returns an index: -1 when the string is absent (a true value) and 0 when it starts the
tail (a false one), so a request with stop strings ends with 'stop' on its first token although no stop
string was generated, and one whose decoded tail begins with its stop string runs on."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {
    "stop string across tokens",
    "stop string in the prompt only",
    "generated: 200 requests grown token by token",
}
MUST_SAY = "it reads the index tail.find(s) as a yes/no"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "str.find returns an index, not a yes/no"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(tail.find(s) for s in sp.stop):
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
