"""When is a request done? The check the scheduler runs after every new token.

Where this sits on the request path: right after the engine samples a token and the scheduler
appends it to `req.output_ids`. If this returns a reason, the request stops, its pages are given
back, and its last `DetokenizeMsg` carries `finished=True`.

Exercise 1 of the course replaces `check_finish` (see `Scheduler.finish_fn`).
"""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

# Decode a few more tokens than the stop string has characters: one character can need
# several tokens, but never fewer than one token per character is safe to assume (+ margin).
_STOP_MARGIN = 4


def check_finish(
    req: Req,
    eos_ids: set[int],
    decode: Optional[Callable[[list[int]], str]] = None,
) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is `req.output_ids[-1]`."""
    sp = req.sampling_params
    token = req.output_ids[-1]
    if not sp.ignore_eos and token in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # Only the tail can contain a stop string that was not there one token ago.
        window = max(len(s) for s in sp.stop) + _STOP_MARGIN
        tail = decode(req.output_ids[-window:])
        for s in sp.stop:
            if s in tail:
                req.stop_str = s
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
