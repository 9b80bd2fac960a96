"""Returns "" when the request keeps going, "no reason, as a string like the others", instead of None. The
scheduler finishes a request whenever the check returns something other than None (`if reason is not None`),
so every request ends on its first token with an empty finish_reason."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'"}
MUST_SAY = "returned '', expected None"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "or None (it goes on)"


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
    return ""
