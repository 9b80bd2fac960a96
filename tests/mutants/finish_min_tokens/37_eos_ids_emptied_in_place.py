"""Below min_tokens it hands check_finish no EOS ids and no decode, written `eos_ids -= eos_ids`
("take the EOS ids out for now"). On a set, `-=` changes the set itself, not the name: the caller's
set (the scheduler's EOS ids, shared by every request) is emptied for good, so after the first
request under its minimum no request ever finishes on EOS again."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: one eos_ids set for every request"}
MUST_SAY = "changed the set it was given: [0, 2] before the call for request A, [] after it"
CAUGHT_BY = {"hand"}
HINT_SAYS = "do not change eos_ids in place"


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
        eos_ids -= eos_ids
        decode = None
    return check_finish(req, eos_ids, decode)
