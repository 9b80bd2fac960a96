"""Holds EOS back one token longer than the stop strings: from min_tokens on it calls check_finish,
but passes the EOS ids only once len(req.output_ids) > min_tokens. The min_tokens-th token is the
one that reaches the minimum, so EOS counts again with it, like the stop strings: an EOS as the
min_tokens-th token must finish with 'stop'. This answer lets it through (None), or calls it 'length'
when it is also the last allowed token."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: the min_tokens-th token counts", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "the minimum is reached with this very token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "< min_tokens holds back, == min_tokens does not"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
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
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    n = len(req.output_ids)
    if n < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids if n > min_tokens else set(), decode)
