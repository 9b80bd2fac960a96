"""Filters the stop list into a generator (`stops = (s for s in sp.stop if s)`, "skip empty stop
strings") and then uses it twice: once to size the decode window, once to search the tail. The first
use, max(), exhausts it, so the search sees no stop string at all and a request never finishes on a
stop string: it runs on to EOS or max_tokens."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "its search sees no stop string"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "can be iterated only once"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        stops = (s for s in sp.stop if s)  # no empty stop strings
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in stops) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in stops):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
