"""Keeps the output's text on the request between calls and, after the first call, decodes only the
newest token and appends its text ("why decode the same tokens again at every step?"). The first
call on a request decodes a proper window, so a check called once looks right. But the scheduler
calls it after every token on the same request, and a byte token of a CJK character or an emoji
decoded on its own gives '\ufffd': the kept text never holds that character, and a stop string made
of it is never found. Differs e.g. for the output 'one two two 我' grown token by token with
stop=['one two two 我']: the reference answers "stop" at the 6th token, this answer "length"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"generated: 200 requests grown token by token"}
MUST_SAY = "carries something over from earlier calls"
CAUGHT_BY = {"generated"}
HINT_SAYS = "it decoded only the newest token"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        seen = getattr(req, "text_seen", 0)
        if seen and seen == len(req.output_ids) - 1:
            text = req.text_so_far + decode(req.output_ids[-1:])  # only the new token
        else:
            text = decode(req.output_ids[-window:])  # the first call: a whole window
        req.text_so_far = text[-4 * window :]
        req.text_seen = len(req.output_ids)
        if any(s in req.text_so_far for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
