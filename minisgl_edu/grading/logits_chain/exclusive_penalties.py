"""Penalties written as alternatives, `if repetition ... elif frequency or presence ...`: a request that
asks for both kinds gets only the repetition penalty.

The contract applies every penalty a request asks for, one after the other: the repetition penalty
scales, then frequency and presence subtract. `one_kind_only` names this when row i is the chain with
frequency and presence made neutral, and the answer gets the row right once the repetition penalty is
neutral (so the skipped link works on its own, and is skipped only beside the repetition penalty).
readings.py asks it before it reads the difference as output tokens left out of the counts, which the
same row also looks like. The other way round (only frequency and presence applied) is not named here:
a row computed from the model's logits, overwriting the repetition penalty's work, looks the same.

`presence_beside_frequency` names the same elif one link down, `if frequency ... elif presence ...`: a
request with both gets only the frequency penalty. Named when row i is the chain with presence made
neutral, and the answer gets a small row of its own right with presence alone (frequency 0), so presence
works and is skipped only beside frequency (`pres_needs_freq`, mistakes.py, is the other way round).
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close, _describe, _first_difference, _reference

REPETITION, SUBTRACTED = "the repetition penalty", "the frequency/presence penalties"
PRESENCE_SKIPPED = (
    "your answer skips the presence penalty when the row has a frequency penalty: a request may set both, "
    "and gets both (if ... if, not if ... elif)"
)


def _neutral(req: Req, kind: str) -> Req:
    """`req` with one kind of penalty made neutral: REPETITION (1), SUBTRACTED (both 0), or one field's name."""
    sp = copy.copy(req.sampling_params)  # (keeps the stretch's min_p, set on the instance)
    if kind == REPETITION:
        sp.repetition_penalty = 1.0
    elif kind == SUBTRACTED:
        sp.frequency_penalty, sp.presence_penalty = 0.0, 0.0
    else:
        setattr(sp, kind, 0.0)  # one field by name: "presence_penalty" or "frequency_penalty"
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


def _presence_alone_right(fn, req: Req, min_p: bool) -> bool:
    """Whether the answer takes presence right off a small row of its own: [1, 2, 0.5, -1], output [1, 3, 3],
    the request's presence penalty and no frequency penalty (nothing else the chain does)."""
    sp = copy.copy(req.sampling_params)
    sp.repetition_penalty, sp.frequency_penalty, sp.logit_bias = 1.0, 0.0, {}
    probe = [Req(0, [0], sp, [1, 3, 3])]
    logits = torch.tensor([[1.0, 2.0, 0.5, -1.0]])
    try:
        return _close(_call(fn, logits, probe)[0], _reference(logits, probe, min_p)[0])
    except Exception:
        return False


def presence_beside_frequency(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i asks for frequency and presence, came back with presence skipped, and the
    answer applies presence right on a probe without frequency; None otherwise."""
    req = reqs[i]
    sp = req.sampling_params
    if not (sp.frequency_penalty and sp.presence_penalty) or not req.output_ids:
        return None
    without = _reference(logits[i : i + 1], [_neutral(req, "presence_penalty")], min_p)[0]
    if _close(without, want[i]) or not _close(got[i], without):
        return None  # the row is not the chain with presence skipped
    if not _presence_alone_right(fn, req, min_p):
        return None  # presence is wrong on its own too: not a matter of the frequency penalty
    return (
        f"row {i} ({_describe(req)}): the frequency penalty was taken off but the presence penalty was not, yet "
        f"on a row with presence_penalty alone the answer takes it off right "
        f"({_first_difference(got[i], want[i], logits[i])}): the answer skips the presence penalty whenever the "
        "row has a frequency penalty (an elif?). A request that sets both gets both: f per occurrence, and r "
        "once for every token present in the output",
        PRESENCE_SKIPPED,
    )
