"""Below min_tokens, a held-back EOS as the newest token returns None before the length test ("a
held EOS does not count, so keep going"), even when it is the last allowed token. Holding the EOS
back only stops it from ending the request; the length limit is a hard cap all the same, so the
request ends there with 'length' instead of running past max_new_tokens."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "expected 'length'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the length, and answer 'length' when it is reached"


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
        if req.output_ids[-1] in eos_ids:
            return None
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
