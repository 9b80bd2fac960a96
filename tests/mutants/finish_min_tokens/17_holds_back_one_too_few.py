"""Counts the output as long enough one token early (`n < min_tokens - 1`), reading min_tokens as
"tokens before the one being checked". min_tokens is the number of output tokens the request must
have, the newest included: while len(req.output_ids) < min_tokens, EOS and stop strings wait. Here
an EOS or a stop string completed by the (min_tokens - 1)-th output token already finishes the
request, one token short of the minimum. Differs e.g. for an EOS as the 4th output token with
min_tokens=5: the reference answers None, this answer "stop"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: the min_tokens-th token counts"}
MUST_SAY = "one short of the minimum"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "(not min_tokens - 1)"


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
    if n < min_tokens - 1:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
