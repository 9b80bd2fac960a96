"""Reads the newest token with `req.output_ids.pop()` ("the last element") instead of
`req.output_ids[-1]`. pop() also removes it: every call takes a token out of the output, so the
stop-string window and the length count see one token less, and the scheduler's output loses the token
it had just appended. The check only reads req: it never changes req.output_ids."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'", "generated: 200 requests grown token by token"}
MUST_SAY = "changed req.output_ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "leave req.output_ids as it is"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    newest = req.output_ids.pop()
    if not sp.ignore_eos and newest in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
