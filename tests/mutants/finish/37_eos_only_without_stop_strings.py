"""Writes the EOS test as the `elif` of the stop-string test, so a request with stop strings never
finishes on EOS: its stop-string test runs (and finds nothing), and the EOS test is skipped. The
model's end token then stays in the output and the request runs on to max_tokens, generating past
the end of its answer. An EOS ends every request (unless ignore_eos), stop strings or not: the two
tests are separate, each of which can return 'stop'."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'", "generated: 200 requests grown token by token"}
MUST_SAY = "without stop strings your check returned 'stop' for this same output"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an EOS ends a request that has stop strings too"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    elif not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
