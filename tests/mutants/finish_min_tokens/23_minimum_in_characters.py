"""Measures the minimum in characters of the decoded output (`len(decode(req.output_ids))`) instead of
output tokens. A token can hold several characters (' three': 6) or none (a special token), so ' ok ok'
plus an EOS, 3 tokens, passes min_tokens=5 on its 6 characters and finishes early, while tokens that
decode to nothing never reach it. min_tokens counts output tokens: len(req.output_ids)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "your minimum follows the decoded text"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_tokens counts output tokens"


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
    shown = len(decode(req.output_ids)) if decode is not None else n
    if shown < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
