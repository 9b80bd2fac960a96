"""When is a request done? The check the scheduler runs after every new token.

Where this sits on the request path: right after the engine samples a token and the scheduler
appends it to `req.output_ids`. If this returns a reason, the request stops, its pages are given
back, and its last `DetokenizeMsg` carries `finished=True`.

Exercise 1 of the course replaces `check_finish` (see `Scheduler.finish_fn`).
"""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

# How many of the newest tokens to decode: a stop string of b bytes in UTF-8 spans at most b tokens
# (a token of a byte-level tokenizer stands for at least one byte, and a CJK character or an emoji,
# 3 or 4 bytes, can take a token for each), plus a margin for the token whose text begins before
# the stop string and for special tokens, which decode to nothing.
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
        window = max(len(s.encode("utf-8")) for s in sp.stop) + _STOP_MARGIN
        tail = decode(req.output_ids[-window:])
        for s in sp.stop:
            if s in tail:
                req.stop_str = s
                return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
