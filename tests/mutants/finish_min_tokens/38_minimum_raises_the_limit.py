"""Makes room for the minimum by raising the request's own limit, `req.max_new_tokens =
max(req.max_new_tokens, min_tokens)`, then holds EOS and stop strings back below the minimum.
The check must only decide and never change the request; and a min_tokens above max_new_tokens
must still end the request with "length" at max_new_tokens, not run it on to min_tokens."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "changed req.max_new_tokens from 3"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "leave req.max_new_tokens as it is"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
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
    # the request must produce at least min_tokens tokens, so its limit can be no lower
    req.max_new_tokens = max(req.max_new_tokens, min_tokens)
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
