"""Finishes with 'stop' when any output token is an EOS id (`any(t in eos_ids for t in
req.output_ids)`), not only the newest one. check_finish runs after every token: an EOS earlier in
the output would have finished the request then, so an old EOS id in req.output_ids is a token that
did not end it (an ignored EOS before, or an id that is ordinary text). Only req.output_ids[-1] is
new, and only it decides."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'"}
MUST_SAY = "only the newest token counts"
CAUGHT_BY = {"hand"}
HINT_SAYS = "test req.output_ids[-1] only, not every output token"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and any(t in eos_ids for t in req.output_ids):
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
