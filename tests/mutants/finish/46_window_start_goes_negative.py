"""Slices the tail as output_ids[len(output_ids) - window:]. While the output is shorter than the
window the start is negative, and a negative start counts from the end: with 4 output tokens and a
window of 6 it decodes only the last 2, so a stop string in the first tokens of a short output is
missed ('one\\n\\ntwo' for '\\n\\n'). output_ids[-window:] (or a start of max(0, ...)) takes the whole
output instead."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "starts at a negative index"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a negative slice start: output_ids[len(output_ids) - window:] wraps around"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        start = len(req.output_ids) - window
        tail = decode(req.output_ids[start:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
