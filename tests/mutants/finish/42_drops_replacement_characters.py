"""Takes U+FFFD out of the decoded tail before the search ("half characters at the window's edges
are noise"). The text is searched exactly as decoded: a character cut short in the middle of the
output stays '\\ufffd', and taking it out joins the text on both sides into a false match ('a',
a cut '我', 'b' decode to 'a\\ufffdb', which does not hold the stop string 'ab')."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of CJK characters"}
MUST_SAY = "taken out"
CAUGHT_BY = {"hand"}
HINT_SAYS = "never take out U+FFFD"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:]).replace("\ufffd", "")
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
