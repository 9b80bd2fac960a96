"""Sizes the decode window by the stop string with the most characters, max(stop, key=len), then
counts that string's bytes plus a margin. The string with the most characters is not always the one
with the most bytes: beside ' END' (4 characters, 4 bytes) the stop string '🚀🚀🚀' has 3 characters
but 12 bytes and spans 9 tokens, more than the 8 the window holds, so the request never stops on
it. The window must be sized by max(len(s.encode()) for s in stop)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"the longest stop string sets the window", "generated: 200 requests grown token by token"}
MUST_SAY = "the most bytes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pick the longest stop string by bytes, not by characters"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        longest = max(sp.stop, key=len)
        tail = decode(req.output_ids[-(len(longest.encode("utf-8")) + 4) :])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
