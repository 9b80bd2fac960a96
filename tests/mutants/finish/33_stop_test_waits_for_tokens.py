"""Skips the stop-string test until the output has at least as many tokens as the shortest stop
string has characters, "it cannot be there before". A token is not a character: ' three' is one
token for 5 characters, so 'one two three' (3 tokens) already holds the stop string 'three', and
the answer goes on past it (or ends with 'length' on the last allowed token)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop beats length", "stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "skips the stop strings while the output has few tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a single token can carry a whole stop string"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None and len(req.output_ids) >= min(len(s) for s in sp.stop):
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
