"""Below min_tokens, at the length cap it hands over to check_finish, so an EOS (or a stop string)
on the last allowed token gives 'stop'. Below min_tokens that EOS is held back: it cannot end the
request, the length limit does, so the reason is 'length'."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "answer 'length'"
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
    if n < min_tokens and n < req.max_new_tokens:
        return None
    return check_finish(req, eos_ids, decode)
