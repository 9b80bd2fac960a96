"""Works the decode window out once, on the first call that has stop strings, and keeps it in a module
global for every later call ("the check runs after every token: compute the window once"). The window
must fit this request's own stop strings: a later request whose stop string has more bytes than the
first one's (an emoji flag is 8 bytes and can take 6 tokens) decodes too short a tail, misses the stop
string, and runs on to its length limit."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "its window does not follow this request's stop strings"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "size the window on every call from this request's own stop strings"

_window = None


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    global _window
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        if _window is None:
            # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
            _window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-_window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
