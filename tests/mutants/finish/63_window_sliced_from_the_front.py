"""Slices the decode window as `req.output_ids[window:]`, dropping the minus sign of `[-window:]`.
While the output is no longer than the window that slice is empty, so a stop string among the first
tokens of the answer is never seen; later it decodes everything from token `window` on (most of the
output, on every call). The window must be the LAST `window` tokens."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "counted from the front"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "slice the window from the end"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
