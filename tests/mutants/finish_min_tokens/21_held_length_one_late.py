"""While EOS and stop strings are held back, tests the length with `>` instead of `>=`: a request
whose min_tokens is above its req.max_new_tokens gets one token more than it may (at the
max_new_tokens-th token it answers None). The length limit is the same below min_tokens as after
it: 'length' once len(req.output_ids) reaches req.max_new_tokens."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "one token late"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "'length' once len(req.output_ids) >= req.max_new_tokens (not >)"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        if any(s in decode(req.output_ids[-window:]) for s in sp.stop):
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
        return "length" if n > req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
