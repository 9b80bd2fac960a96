"""Decodes a window of a fixed size, the last 12 tokens, whatever the stop strings are ("no stop
string I can think of is longer"). The window must fit this request's own stop strings: a stop string
of 48 bytes (six emoji flags) spans 36 tokens, so a fixed window of 12 misses it and the request runs
on to its length limit. Size it by the longest stop string's bytes, plus a margin."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "your check decodes the last 12 tokens both for stop=['!'] (1 byte)"
CAUGHT_BY = {"hand"}
HINT_SAYS = "size the window on every call from this request's own stop strings"

WINDOW = 12


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        tail = decode(req.output_ids[-WINDOW:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
