"""Skips the stop-string test when the decoded tail holds U+FFFD ("a half-decoded tail cannot be
trusted"). A window of whole tokens often starts or ends inside a character (CJK characters and
emoji are several byte tokens each, and the newest token may end mid-character), and decode shows
that cut character as U+FFFD; the stop string is still in the rest of the tail, so the request
runs on past it."""

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"generated: 200 requests grown token by token"}
MUST_SAY = "U+FFFD"
CAUGHT_BY = {"generated"}
HINT_SAYS = "never skip the stop-string test because the tail holds one"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if "\ufffd" not in tail and any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
