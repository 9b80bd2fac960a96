"""Decodes the window of tokens *before* the newest one (`output_ids[-window-1:-1]`) and looks for the
stop strings there, reasoning that the newest token was already judged by the EOS test. A stop
string completed by the newest token is only seen one call later, so the request runs one token too
long (or never stops on it when that token was the last allowed)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "its window leaves out the newest token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the window must end with the newest token"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window - 1 : -1])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
