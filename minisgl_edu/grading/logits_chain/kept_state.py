"""State kept between calls: the answer reuses, for a request it has seen before, something it worked out
on an earlier call (a grammar mask or token counts cached by uid or by the Req object).

The chain is a pure function of the batch as it is now: the grammar moves on after every accepted token
and req.output_ids grows, so a value kept from an earlier step goes stale. `kept_between_calls` runs the
answer on the very same batch again, each request a new Req object with a uid never used before, and
names this mistake only when that batch comes back right on every row while the batch as given did not:
the uids (the requests it had seen before), not the logits or the settings, made the difference.
"""

from __future__ import annotations

import copy
import itertools

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close_all, _describe, _first_difference

_FRESH_UIDS = itertools.count(7_000_000_001)  # uids no case uses, a new one for every probe


def _fresh(req: Req) -> Req:
    """The same request (same prompt, output, settings and grammar) as a new Req with an unused uid."""
    return Req(
        next(_FRESH_UIDS),
        list(req.input_ids),
        copy.copy(req.sampling_params),
        list(req.output_ids),
        grammar=req.grammar,
    )


def kept_between_calls(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req]):
    """(message, hint) when the batch with every request renamed (new Req objects, unused uids) comes back
    right on every row, though row i of the batch as given did not; None otherwise."""
    try:
        renamed = _call(fn, logits.clone(), [_fresh(r) for r in reqs])
    except Exception:
        return None
    if not _close_all(renamed, want):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}. The same batch with "
        "each request given as a new Req with a uid your function had not seen comes back right on every row: "
        "your process_logits reused something kept from an earlier call for this request",
        "state kept between calls: your function reused a value worked out on an earlier call for the same "
        "request (a mask or counts cached per uid), but the grammar moves on after every accepted token and "
        "req.output_ids grows: compute every link from the request as it is now, on every call",
    )
