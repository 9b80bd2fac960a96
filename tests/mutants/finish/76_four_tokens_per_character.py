"""Sizes the decode window at 4 tokens per character of the longest stop string, 4 * len(s): "a
character is at most 4 bytes in UTF-8 and a token at least one byte". True of text tokens, but with
ignore_eos an EOS kept in the output is a token of no byte, and up to three may sit inside a stop
string: stop='我' (1 character, 3 byte tokens) with 2 ignored EOS among them spans 5 tokens > 4."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "its window counts 4 tokens per character"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "spans more tokens than 4 per character"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # UTF-8 spends at most 4 bytes on a character, and a token holds at least one byte
        window = 4 * max(len(s) for s in sp.stop)
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
