"""Decodes a window of the longest stop string's UTF-8 bytes plus a margin of 2 tokens ("the token
it starts in and one spare"). A token stands for at least one byte, and an EOS that ignore_eos
keeps decodes to no text, so a stop string of b bytes with k ignored EOS ids among its tokens spans
up to b + k tokens; the contract allows up to three, so the window needs len(s.encode()) + 3 at
least. Differs e.g. for stop=["1+2"] (3 bytes, one token each) and the output 'x 1+2' with EOS ids
2, 0 and 2 among its tokens ('1', EOS, EOS, '+', EOS, '2': 6 tokens): the reference answers "stop",
this answer None (its 5-token window decodes to '+2')."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "three EOS ids"
CAUGHT_BY = {"hand"}
HINT_SAYS = "leaves a margin too small for three ignored EOS ids"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 2  # the token it starts in, and one spare
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
