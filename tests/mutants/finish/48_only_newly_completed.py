"""Counts a stop string only if the newest token completed it: found in the decoded tail but absent
from the same tail without the newest token. A stop string that an earlier token completed and that
the window still shows ('one\\n\\ntwo' holds '\\n\\n', the newest token is 'two') is a match all the
same: the contract searches the decoded window on every call."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "counts only a match the newest token completes"
CAUGHT_BY = {"hand"}
HINT_SAYS = "a stop string already in the decoded window finishes the request, also one an earlier token completed"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        before = decode(req.output_ids[-window:-1])
        if any(s in tail and s not in before for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
