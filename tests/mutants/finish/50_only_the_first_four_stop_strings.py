"""Looks only at the first four stop strings, `sp.stop[:4]`, "the OpenAI API accepts at most four". This engine
puts no such limit on the list (the contract: the text contains one of `req.sampling_params.stop`), so a fifth
stop string in the list is never checked and the request runs on past it to EOS or its length limit. Differs
for 5 stop strings whose 5th, 'two three', ends the output 'one two three': the reference answers "stop", this
answer None."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string across tokens", "generated: 200 requests grown token by token"}
MUST_SAY = "it reads only the first 4"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "however long the list"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    stops = sp.stop[:4]  # the OpenAI API takes up to 4 stop sequences
    if stops and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in stops) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in stops):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
