"""Sizes the decode window by the words of the longest stop string (len(s.split()) + 4 tokens),
reasoning that a token is about a word. A stop string of emoji or CJK characters with no spaces is
one word but spans many byte tokens, so the window misses its start and the request runs on."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string of emoji, at the edge of the window"}
MUST_SAY = "its window counts the stop string's words"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not in words, len(s.split())"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.split()) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
