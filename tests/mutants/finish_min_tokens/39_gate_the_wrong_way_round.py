"""Writes the gate with the comparison the wrong way round, `if n > min_tokens:` hold back (the length limit
alone), else `check_finish`, as if min_tokens were the point after which EOS and stop strings stop counting.
A request then finishes on an EOS before its minimum, exactly what min_tokens forbids, and once past the
minimum it never stops on EOS or a stop string at all, only on the length limit."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: stop strings wait too"}
MUST_SAY = "an EOS before min_tokens must not finish the request"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "while len(req.output_ids) < min_tokens, ignore EOS"


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
    if n > min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
