"""Writes the decode window as `req.output_ids[-window]`, the colon of the slice `[-window:]` lost. That is one
token id, the one `window` places from the end: while the output is shorter than the window it raises
IndexError, and later decode is given a single id, not the list of the last window tokens, so a stop
string is almost never seen."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop beats length"}
MUST_SAY = "IndexError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "slice the window, do not index it"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
