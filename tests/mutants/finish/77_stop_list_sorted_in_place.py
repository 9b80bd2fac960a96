"""Finds the longest stop string (in UTF-8 bytes) by sorting the request's stop list in place,
`sp.stop.sort(key=...)`, and taking its last item, instead of `sorted()` or `max()`. The window is
right, but the check must only read req: it reorders the client's stop list, which the scheduler
sends to the detokenizer with every token (list.sort() changes the list itself, sorted() a copy)."""

from __future__ import annotations

from typing import Callable, Optional

MUST_FAIL = {"the longest stop string sets the window"}
MUST_SAY = "your check_finish changed req.sampling_params"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "leave req.sampling_params as it is"


def check_finish(req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        sp.stop.sort(key=lambda s: len(s.encode("utf-8")))  # the longest (in bytes) comes last
        window = len(sp.stop[-1].encode("utf-8")) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
