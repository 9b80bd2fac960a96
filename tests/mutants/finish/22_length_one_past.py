"""Ends with "length" only once the output has gone past max_new_tokens (`>` instead of `>=`). The
max_new_tokens-th token is the last one allowed: at exactly that many tokens the request must end,
or it gets one token more than max_tokens, and where the limit was clamped to the context, the
extra token has no slot in it. Differs e.g. for 3 output tokens of max_new_tokens=3: the reference
answers "length", this answer None."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"max_tokens finishes with 'length'"}
MUST_SAY = "3 of max 3 tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "== req.max_new_tokens (>=, not >)"


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
    if len(req.output_ids) > req.max_new_tokens:
        return "length"
    return None
