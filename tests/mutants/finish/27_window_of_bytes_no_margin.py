"""Decodes a window of exactly the longest stop string's UTF-8 bytes, len(s.encode()) tokens, with
no margin ("a token is at least one byte, so b bytes span at most b tokens"). That holds only for
tokens that decode to text: with ignore_eos an EOS token stays in the output and decodes to ''
(the scheduler's decode skips special tokens), so a stop string with ignored EOS ids among its
tokens spans more tokens than it has bytes, and the window cuts off its first character: the
request never stops on it. Differs e.g. for stop=["北京"] (6 bytes) and the output 'x 北京' with
EOS ids 2 and 0 among the five byte tokens of 北京 (7 tokens): the reference answers "stop", this
answer None (its 6-token window decodes to '��京')."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "decode skips special tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "your window of exactly len(s.encode()) tokens leaves none"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop)  # a token is at least one byte
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
