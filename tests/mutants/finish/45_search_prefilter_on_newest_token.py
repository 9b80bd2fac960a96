"""Skips the stop-string search unless the newest token's own text holds the last character of some
stop string (a "cheap pre-filter" before decoding the window). The newest token need not show it:
a stop string can end in a token before the newest one and still sit in the window ('one\\n\\ntwo'
holds '\\n\\n', the newest token is 'two'), and a byte token of a CJK character or an emoji decodes
to '\\ufffd' on its own, so the search is skipped exactly where the stop string is."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "skipped the search"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the search was skipped (a pre-filter on the newest token's text"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        newest = decode(req.output_ids[-1:])
        if any(s[-1] in newest for s in sp.stop):
            window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
            tail = decode(req.output_ids[-window:])
            if any(s in tail for s in sp.stop):
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
