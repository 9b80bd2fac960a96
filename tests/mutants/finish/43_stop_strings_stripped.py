"""Strips each stop string before the search ("' four' and 'four' are the same stop"). The stop
strings are searched exactly as the client gave them: '\\n\\n' stripped is '', which every text
holds, so the request stops on its first token, and ' four' stripped is 'four', found inside
'fourteen'."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "stop strings stripped"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the stop strings were changed (stripped) before the search"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s.strip() in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
