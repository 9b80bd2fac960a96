"""Matches the stop strings ignoring case (`s.lower() in tail.lower()`), so the output 'Four score
and' stops a request whose stop string is 'four'. A stop string is text the client asked to end
on, exactly as written: the detokenizer cuts the text only where the stop string itself occurs, and
the reference (like SGLang and vLLM) compares with `s in tail`, case included."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "capital F"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "match the stop strings exactly, case-sensitively"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:]).lower()
        if any(s.lower() in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
