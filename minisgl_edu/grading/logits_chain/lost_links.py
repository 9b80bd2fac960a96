"""A row whose links were computed but never reached the tensor returned: `row = row - ...` (or any
other assignment to the name `row`) binds the name to a new tensor, so that link and every later one
change the copy, not `out[i]`.

`check_rows` (check.py) asks this when no known mistake gives the row. The wrong row must be the chain stopped
early (the logits as given, or after the repetition penalty only, which is often written in place as
`row[seen] = ...`), and stay so when the whole batch samples (temperature 1): then the lost links are
not a greedy row left alone, but changes that never reached the tensor.
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
    _forgot_min_p_in_the_shortcut,
    _reference,
)


def _stopped(req: Req, after_repetition: bool) -> Req:
    """`req` with every link after the repetition penalty (or every link) taken away."""
    sp = copy.copy(req.sampling_params)
    sp.frequency_penalty, sp.presence_penalty, sp.logit_bias = 0.0, 0.0, {}
    sp.repetition_penalty = sp.repetition_penalty if after_repetition else 1.0
    if getattr(sp, "min_p", 0.0):
        sp.min_p = 0.0
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=None)


def _sampling(req: Req) -> Req:
    sp = copy.copy(req.sampling_params)
    sp.temperature, sp.top_k = (1.0, -1) if sp.is_greedy else (sp.temperature, sp.top_k)
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def lost_links(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i is the chain stopped early, on this batch and on the same batch made to
    sample; None otherwise."""
    if _forgot_min_p_in_the_shortcut(got, logits, reqs):
        return None  # a batch where min_p is the only link, returned as given: the shortcut's mistake
    for after_repetition in (False, True):
        stopped = _reference(logits[i : i + 1], [_stopped(reqs[i], after_repetition)], min_p)[0]
        if _close(stopped, want[i]) or not _close(got[i], stopped):
            continue
        sampling = [_sampling(r) for r in reqs]
        try:
            again = _call(fn, logits, sampling)[i]
        except Exception:
            return None
        if _close(again, _reference(logits, sampling, min_p)[i]) or not _close(again, stopped):
            return None
        lost = "every link after the repetition penalty" if after_repetition else "every link"
        return (
            f"row {i} ({_describe(reqs[i])}): {lost} left this row as it was, on this batch and on the same batch "
            f"with every row sampling ({_first_difference(got[i], want[i], logits[i])}). The changes never "
            "reached the tensor you return",
            f"{lost} changed nothing in the tensor you return: `row = row - ...` (any assignment to the name) "
            "makes a new tensor and leaves out[i] as it was; change the row in place (row -= ..., row[t] += ...) "
            "or write the result back (out[i] = ...)",
        )
    return None
