"""Drops a min_tokens that the length limit never lets the request reach ("if min_tokens >
req.max_new_tokens the minimum cannot be met, so it is ignored"), and then checks as check_finish
does. The contract: "if min_tokens is above req.max_new_tokens, the request ends with "length"":
the EOS and stop strings stay held back all the way to the cap. With max_new_tokens = 6 and
min_tokens = 10, an EOS as the 3rd output token finishes this answer's request with "stop" where
the reference returns None (and a stop string completed before the cap likewise)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "which the request can never reach"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "still holds EOS and stop strings back, all the way to the limit"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
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


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    n = len(req.output_ids)
    if min_tokens > req.max_new_tokens:
        min_tokens = 0  # a minimum the length limit never lets it reach cannot be met: drop it
    if n < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
