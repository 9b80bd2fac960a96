"""Counts a stop string only when it is a whole word of the decoded tail (`s in tail.split()`): a stop
string with a space in it ('two three'), or one inside a word, never matches, though the decoded
text holds it. A stop string is a plain substring of the text, wherever it sits."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens"}
MUST_SAY = "which ends with the stop string"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test each stop string as a plain substring of the decoded text"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        words = decode(req.output_ids[-window:]).split()
        if any(s in words for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
