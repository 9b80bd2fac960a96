"""Strips the decoded tail before looking for stop strings ("decode leaves stray spaces around").
A stop string that is or ends with whitespace ("\n", "\n\n", "User:\n") completed by the
newest token is stripped away with the tail's end, so the request runs on past it."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"generated: 200 requests grown token by token"}
MUST_SAY = "spaces included"
CAUGHT_BY = {"generated"}
HINT_SAYS = "never stripped or normalized"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:]).strip()
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
