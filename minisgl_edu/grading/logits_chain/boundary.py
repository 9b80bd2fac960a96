"""A setting at the edge of its range treated as "off": min_p = 1 skipped as if it were 0.

top_p = 1 means "no top-p", so an answer may test `0 < min_p < 1` and skip min_p = 1 too. But min_p
is off only at 0; at 1, its largest value, it keeps only the tokens exactly as likely as the most likely
one (the ties for the top) and drops every other. `boundary_as_off` names this when row i, with min_p 1,
came back as the chain gives it without min_p, and the answer cuts the same row right once its min_p
is 0.99: so its min_p works, and only the value 1 is taken for "off".
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _describe,
    _first_difference,
    _min_p_of,
    _reference,
)

MIN_P_ONE_HINT = (
    "min_p = 1 is not off: it keeps only the tokens as likely as the most likely one (0 is off): filter every row "
    "that samples with min_p > 0, 1 included"
)
NUDGED = 0.99


def _with_min_p(req: Req, value: float) -> Req:
    sp = copy.copy(req.sampling_params)  # (keeps the stretch's min_p, set on the instance)
    sp.min_p = value
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def boundary_as_off(fn, i: int, got, want, logits: torch.Tensor, reqs: list[Req], min_p: bool):
    """(message, hint) when row i samples with min_p 1, came back as the chain without min_p, and the answer
    cuts the same batch's row right with min_p 0.99 instead; None otherwise."""
    sp = reqs[i].sampling_params
    if not min_p or _min_p_of(sp) != 1.0 or sp.is_greedy:
        return None
    without = _reference(logits[i : i + 1], [_with_min_p(reqs[i], 0.0)], min_p)[0]
    if _close(without, want[i]) or not _close(got[i], without):
        return None
    nudged = list(reqs)
    nudged[i] = _with_min_p(reqs[i], NUDGED)
    expected = _reference(logits, nudged, min_p)[i]
    if _close(expected, without):
        return None  # min_p 0.99 cuts nothing here: the probe proves nothing
    try:
        if not _close(_call(fn, logits, nudged)[i], expected):
            return None
    except Exception:
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): min_p 1 made no cut: the row came back as the chain gives it without "
        f"min_p ({_first_difference(got[i], want[i], logits[i])}), yet the same row with min_p {NUDGED:g} is cut "
        "right. min_p = 1 is its largest value, not 'off': it keeps only the tokens exactly as likely as the most "
        "likely one (the ties for the top) and drops every other; only min_p = 0 is off",
        MIN_P_ONE_HINT,
    )
