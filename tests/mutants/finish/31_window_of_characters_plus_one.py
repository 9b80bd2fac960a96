"""Decodes len(s) + 1 tokens for the longest stop string, "a token per character, plus the token
its first character begins in". A character is not a token: a CJK character is three bytes in
UTF-8 and the byte-level tokenizer can spend a token on each, so '北京' (2 characters, 6 bytes)
spans 4 tokens of '我爱北京' and the window of 3 cuts off its first bytes: the request never
stops on it. The window must be counted in bytes, len(s.encode()), plus a margin."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of CJK characters", "stop string of emoji, at the edge of the window"}
MUST_SAY = "6 bytes in UTF-8"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count the stop string's bytes, len(s.encode()), not its characters"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        longest = max(sp.stop, key=len)
        text = decode(req.output_ids[-(len(longest) + 1) :])
        for s in sp.stop:
            if s in text:
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
