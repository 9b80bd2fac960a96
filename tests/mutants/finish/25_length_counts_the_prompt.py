"""Reads req.max_new_tokens as the cap on the whole sequence ("max_tokens, clamped by the scheduler
to what fits in the context": a context-sized limit) and tests `len(req.all_ids) >=
req.max_new_tokens`, prompt included. The contract: "length" when len(req.output_ids) reached
req.max_new_tokens; only output tokens count. A request whose prompt is at least as long as its
max_new_tokens ends with "length" on its first token, and every other request ends len(prompt)
tokens early. Differs e.g. for a 10-token prompt, max_new_tokens 16 and 6 output tokens (no EOS,
no stop string): the reference answers None, this answer "length"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"max_tokens finishes with 'length'"}
MUST_SAY = "Your length counts the prompt's tokens too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "counts the generated tokens only"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.all_ids) >= req.max_new_tokens:  # the clamped limit: what fits in the context
        return "length"
    return None


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    n = len(req.output_ids)
    if n < min_tokens:
        # Too early for EOS and stop strings; the length limit is a hard cap all the same.
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)
