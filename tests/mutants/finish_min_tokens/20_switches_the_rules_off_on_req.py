"""Holds EOS and stop strings back by switching them off on the request itself: below min_tokens it
saves (ignore_eos, stop) on req, sets sampling_params.ignore_eos = True and sampling_params.stop =
[], and puts the saved values back once the minimum is reached, then calls check_finish. Every
reason it returns is right, but the check only decides: req.sampling_params is the client's, and
the rest of the engine reads it while the request runs. The scheduler sends
list(req.sampling_params.stop) to the detokenizer with every token, so while min_tokens holds the
detokenizer has no stop strings to cut the text at (and ignore_eos looks set to anyone who reads
the request). Differs at the first call below the minimum: the request's parameters change."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: generated: 200 requests grown token by token"}
MUST_SAY = "changed req.sampling_params"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not by switching them off on the request"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    sp = req.sampling_params
    if len(req.output_ids) < min_tokens:
        if not hasattr(req, "held_rules"):
            req.held_rules = (sp.ignore_eos, list(sp.stop))
        sp.ignore_eos, sp.stop = True, []  # only the length can finish it yet
    elif hasattr(req, "held_rules"):
        sp.ignore_eos, sp.stop = req.held_rules  # the minimum is reached: its own rules again
        del req.held_rules
    return check_finish(req, eos_ids, decode)
