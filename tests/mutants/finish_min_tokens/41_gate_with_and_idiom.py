"""Writes the held-back branch as `return n >= req.max_new_tokens and "length"`, the and/or idiom for "'length'
if the cap is reached". Below the cap that expression is False, not None: the scheduler tests
`reason is not None`, so every request with a minimum ends on its first token with finish_reason False."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens"}
MUST_SAY = "returned False, expected None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "or None while it goes on: never True/False"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    n = len(req.output_ids)
    if n < min_tokens:
        # the length limit is a hard cap even before the minimum
        return n >= req.max_new_tokens and "length"
    return check_finish(req, eos_ids, decode)
