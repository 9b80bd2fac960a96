"""Writes the EOS test as `if sp.ignore_eos and req.output_ids[-1] in eos_ids`, the `not` lost: it stops
on an end token only for the requests that asked to IGNORE it. An ordinary chat request runs past its EOS
until max_tokens (and is told "length"), while a benchmark with ignore_eos stops at the first EOS."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'", "ignore_eos"}
MUST_SAY = "stops only the requests that ask to ignore the EOS"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the EOS test is inverted"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if sp.ignore_eos and req.output_ids[-1] in eos_ids:
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
