"""Caps the decode window at 32 tokens, `min(longest stop in bytes + 4, 32)`, "so one client's
very long stop string cannot make every step decode a huge tail". The window must fit this
request's own longest stop string: one of more than ~28 bytes (six emoji flags, 48 bytes, spans 36
byte tokens) never shows whole in a 32-token tail, and the request runs on past it."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "never exceeds 32 tokens"
CAUGHT_BY = {"hand"}
HINT_SAYS = "with no upper cap"

MAX_WINDOW = 32  # tokens: bound the decode cost per step


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = min(max(len(s.encode("utf-8")) for s in sp.stop) + 4, MAX_WINDOW)
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
