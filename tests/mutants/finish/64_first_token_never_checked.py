"""Returns None for the first output token without checking it, reasoning that the first token comes from
the prefill and the check is about decode steps. The scheduler calls the check after every new token, the
first one included: a model that answers with an EOS at once (an empty answer) runs on past it, and a
request with max_tokens=1 gets a second token before "length"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"the first output token"}
MUST_SAY = "it never checks the first output token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the check runs on the first output token too"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if len(req.output_ids) < 2:
        return None  # the first token comes out of the prefill, not a decode step: nothing to check yet
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
