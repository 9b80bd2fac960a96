"""Rows taken by the request's uid: the answer writes the links of reqs[k] into out[reqs[k].uid], not into
out[k], the request's place in the batch.

Row k of the logits belongs to reqs[k]. A uid names a request for the engine's whole life: it grows with every
request and says nothing about where the request sits in this batch, so taken for a row number it puts one
request's penalties on another request's row (and raises IndexError past the batch's end). `check_rows`
(check.py) asks this first, for a batch whose uids are not the rows' positions. The mistake is named only
when both hold: the answer's batch is exactly each request's chain applied, in order, to row uid (the other
rows left as the model gave them), and the same batch with every uid set to its position comes back right.
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close_all, _describe, _first_difference, _reference

UID_ROWS_HINT = (
    "row i of logits belongs to reqs[i], its place in the batch: loop with for i, req in enumerate(reqs) and "
    "change out[i], not out[req.uid]; a uid names the request, not its row (uids grow with every request, and "
    "a batch holds whichever requests run now)"
)


def _at_position(reqs: list[Req]) -> list[Req]:
    """The same requests, each with its position in the batch as its uid."""
    return [
        Req(k, list(r.input_ids), copy.copy(r.sampling_params), list(r.output_ids), grammar=r.grammar)
        for k, r in enumerate(reqs)
    ]


def _by_uid(logits: torch.Tensor, reqs: list[Req], min_p: bool) -> torch.Tensor:
    """What an answer that takes row = out[req.uid] returns: each request's chain, in batch order, applied to
    the row its uid names, as that row stands after the requests before it."""
    out = logits.float().clone()
    for req in reqs:
        out[req.uid] = _reference(out[req.uid : req.uid + 1], [req], min_p)[0]
    return out


def rows_by_uid(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when the answer took each request's row by its uid, confirmed as the module says; None
    otherwise (uids that are the positions already, or that point outside the batch, show nothing)."""
    uids = [r.uid for r in reqs]
    if uids == list(range(len(reqs))) or not all(0 <= u < len(reqs) for u in uids):
        return None
    if not _close_all(got, _by_uid(logits, reqs, min_p)):
        return None
    try:
        renumbered = _call(fn, logits.clone(), _at_position(reqs))
    except Exception:
        return None
    if not _close_all(renumbered, want):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}. Every row of the batch "
        f"comes out as if each request's links went to row req.uid (the uids here are {uids}), and the same batch "
        "with each uid equal to its position comes back right: your process_logits takes a request's row by its "
        "uid, not by its place in reqs",
        UID_ROWS_HINT,
    )
