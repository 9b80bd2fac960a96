"""Below min_tokens, treats a held-back EOS as the end of the request with "length" ("the model wants to stop but
may not, so cut it off as a length end"). The contract: while len(output) < min_tokens only the length limit
(len >= max_new_tokens) can finish the request; an EOS is held back and the request keeps going (None)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens"}
MUST_SAY = "returned 'length', expected None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "while len(req.output_ids) < min_tokens, ignore EOS"


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
    n = len(req.output_ids)
    if n < min_tokens:
        if n >= req.max_new_tokens:
            return "length"
        if not req.sampling_params.ignore_eos and req.output_ids[-1] in eos_ids:
            return "length"
        return None
    return check_finish(req, eos_ids, decode)
