"""At exactly the min_tokens-th token, decodes the WHOLE output to catch a stop string that
min_tokens held back earlier. The contract: from the min_tokens-th token on, check_finish's rules
apply unchanged, so only a stop string the decoded tail still shows finishes the request; one that
lies earlier in the output, outside the window, is spent. Differs e.g. with stop=['o'],
min_tokens=6 and the output 'one2 + 2 = ': the reference goes on at token 6 (the 'o' is out of the
5-token tail), this answer says "stop"."""

from __future__ import annotations

from typing import Callable, Optional

MUST_FAIL = {"stretch: generated: 200 requests grown token by token"}
MUST_SAY = "only before the decoded tail"
CAUGHT_BY = {"generated"}
HINT_SAYS = "never search the whole output"


def check_finish(req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
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
    req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    found = check_finish(req, eos_ids, decode)
    if found is None and n == min_tokens and req.sampling_params.stop and decode is not None:
        text = decode(req.output_ids)
        if any(s in text for s in req.sampling_params.stop):
            return "stop"
    return found
