"""Decodes the whole output at every call and searches only the last `window` characters of its
text (window = bytes of the longest stop string + 4, enough for any stop string the newest token
completes). Its return values equal the reference's everywhere, but the contract says "the check
runs for every token of every request, so it must not decode the whole output each time": over a
request of n tokens this answer decodes n(n+1)/2 token ids, the reference a window per token."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"the longest stop string sets the window"}
MUST_SAY = "the whole output, at every token"
CAUGHT_BY = {"hand"}
HINT_SAYS = "never the whole output"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids)[-window:]  # the text's last `window` characters
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
