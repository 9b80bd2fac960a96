"""Clamps a minimum that the length limit makes unreachable to `max_new_tokens - 1`, "so the request
can still stop normally before the limit". The contract: while fewer than min_tokens tokens exist, only
the length limit finishes the request, so with min_tokens above the limit an EOS on the next-to-last
allowed token must be held back (None), and the request ends with "length"; here it ends with "stop"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "still holds the EOS back"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "all the way to the limit"


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
    # a minimum past the length limit cannot be met: lower it so the last tokens can still stop normally
    min_tokens = min(min_tokens, req.max_new_tokens - 1)
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
