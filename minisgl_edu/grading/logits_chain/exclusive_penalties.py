"""Penalties written as alternatives, `if repetition ... elif frequency or presence ...`: a request that
asks for both kinds gets only the repetition penalty.

The contract applies every penalty a request asks for, one after the other: the repetition penalty
scales, then frequency and presence subtract. `one_kind_only` names this when row i is the chain with
frequency and presence made neutral, and the answer gets the row right once the repetition penalty is
neutral (so the skipped link works on its own, and is skipped only beside the repetition penalty).
readings.py asks it before it reads the difference as output tokens left out of the counts, which the
same row also looks like. The other way round (only frequency and presence applied) is not named here:
a row computed from the model's logits, overwriting the repetition penalty's work, looks the same.
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close, _describe, _first_difference, _reference

REPETITION, SUBTRACTED = "the repetition penalty", "the frequency/presence penalties"


def _neutral(req: Req, kind: str) -> Req:
    """`req` with one kind of penalty made neutral: REPETITION (1) or SUBTRACTED (both 0)."""
    sp = copy.copy(req.sampling_params)  # (keeps the stretch's min_p, set on the instance)
    if kind == REPETITION:
        sp.repetition_penalty = 1.0
    else:
        sp.frequency_penalty, sp.presence_penalty = 0.0, 0.0
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def _right_with(fn, i: int, logits: torch.Tensor, reqs: list[Req], variant: Req, min_p: bool) -> bool:
    """Whether the answer gets row i right when its request is `variant`, the rest of the batch the same."""
    batch = list(reqs)
    batch[i] = variant
    try:
        return _close(_call(fn, logits, batch)[i], _reference(logits, batch, min_p)[i])
    except Exception:
        return False


def one_kind_only(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i asks for both kinds of penalty, came back with frequency and presence
    skipped, and the answer applies them right once the repetition penalty is neutral; None otherwise."""
    req = reqs[i]
    sp = req.sampling_params
    if sp.repetition_penalty == 1.0 or not (sp.frequency_penalty or sp.presence_penalty) or not req.output_ids:
        return None
    skipped, kept = SUBTRACTED, REPETITION
    without = _reference(logits[i : i + 1], [_neutral(req, skipped)], min_p)[0]
    if _close(without, want[i]) or not _close(got[i], without):
        return None  # the row is not the chain with frequency and presence skipped
    if not _right_with(fn, i, logits, reqs, _neutral(req, kept), min_p):
        return None  # frequency and presence are wrong on their own too: not a matter of the repetition penalty
    return (
        f"row {i} ({_describe(req)}): only {kept} was applied and {skipped} skipped, yet with {kept} made "
        f"neutral the same row gets {skipped} right ({_first_difference(got[i], want[i], logits[i])}): the "
        f"answer skips {skipped} whenever the row has {kept} (an elif?). A request that asks for both gets "
        "both, one after the other: the repetition penalty scales, then frequency and presence subtract",
        f"your answer skips {skipped} when the row has {kept}: apply every penalty the request asks for, "
        "one after the other (if ... if, not if ... elif)",
    )
