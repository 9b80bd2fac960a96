"""Grows the decode window back from the newest token, one token at a time, until its decoded text
has as many characters as the longest stop string ("decode just enough to be able to hold it").
A token can carry several characters, and a partly decoded multi-byte character counts as one
replacement character per byte token, so the window stops growing before it covers the stop string:
'two th' ending inside ' three' (6 characters, one token) is missed, and so are emoji or CJK stop
strings. The window must be counted in tokens, sized by the stop string's bytes plus a margin."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token", "stop string of CJK characters"}
MUST_SAY = "anywhere in the decoded tail"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not by the characters of the decoded text"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        need = max(len(s) for s in sp.stop)
        k = 1
        tail = decode(req.output_ids[-k:])
        while len(tail) < need and k < len(req.output_ids):
            k += 1
            tail = decode(req.output_ids[-k:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
