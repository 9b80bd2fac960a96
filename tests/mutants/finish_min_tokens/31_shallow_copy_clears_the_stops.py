"""Below min_tokens it runs its own check_finish on a copy of the request with the stop strings and EOS
switched off, made with copy.copy(req): a shallow copy shares req.sampling_params, so setting
`held.sampling_params.stop = []` empties the real request's stop list. Every later call (from the
min_tokens-th token on) then finds no stop string, and the request runs past its stop string to the length limit."""

from __future__ import annotations

import copy
from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: stop strings wait too"}
MUST_SAY = "changed req.sampling_params"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not by switching them off on the request"


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
    if len(req.output_ids) < min_tokens:
        # too early for EOS and stop strings: check a copy without them (only the length limit is left)
        held = copy.copy(req)
        held.sampling_params.stop = []
        return check_finish(held, set(), decode)
    return check_finish(req, eos_ids, decode)
