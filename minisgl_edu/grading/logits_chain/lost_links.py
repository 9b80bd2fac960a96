"""A row whose links were computed but never reached the tensor returned: `row = row - ...` (or any
other assignment to the name `row`) binds the name to a new tensor, so that link and every later one
change the copy, not `out[i]`.

`check_rows` (check.py) asks this when no known mistake gives the row. The wrong row must be the chain stopped
early (the logits as given, or after the repetition penalty only, which is often written in place as
`row[seen] = ...`), and stay so when the whole batch samples (temperature 1): then the lost links are
not a greedy row left alone, but changes that never reached the tensor. A logit_bias added to the row's
request must be lost too (a rebound name loses every link after it): where it reaches the row, the
name was not rebound, and the hint is left to the diagnoses after this one. A row whose request has
no output yet must lose its links with an output token too: an answer that skips the first token's
rows loses them only while the output is empty. And the row must lose them on its own, as the only row
of a batch: a copy made inside the loop over the rows loses every row's links but the last one's
(copy_per_row.py), so a row alone keeps them.
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
from minisgl_edu.grading.logits_chain.neutral import right_above_neutral


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


def _later_link_lost(fn, i: int, logits, reqs: list[Req], stopped: torch.Tensor, min_p: bool) -> bool:
    """Whether a logit_bias added to row i's request (a link after the penalties) is lost too: a row
    rebound by `row = row - ...` loses every link after that line, a link skipped or written into a
    copy loses only itself. A row with no finite token to bias proves nothing either way (True)."""
    finite = [t for t in range(stopped.shape[-1]) if bool(torch.isfinite(stopped[t]))]
    if not finite:
        return True
    sp = copy.copy(reqs[i].sampling_params)
    sp.logit_bias = {**sp.logit_bias, finite[0]: sp.logit_bias.get(finite[0], 0.0) + 1.0}
    probe = list(reqs)
    probe[i] = Req(reqs[i].uid, list(reqs[i].input_ids), sp, list(reqs[i].output_ids), grammar=reqs[i].grammar)
    try:
        return _close(_call(fn, logits, probe)[i], stopped)
    except Exception:
        return False


def _lost_with_an_output(fn, i: int, logits, reqs: list[Req], after_repetition: bool, min_p: bool) -> bool:
    """Whether row i still loses its links once its request has an output token: a rebound name loses them
    whatever the output, an answer that skips the rows with no output yet (the first token) does not."""
    req = reqs[i]
    if req.output_ids:
        return True
    variant = Req(req.uid, list(req.input_ids), req.sampling_params, list(req.input_ids[:1]), grammar=req.grammar)
    probe = list(reqs)
    probe[i] = variant
    stopped = _reference(logits[i : i + 1], [_stopped(variant, after_repetition)], min_p)[0]
    try:
        return _close(_call(fn, logits, probe)[i], stopped)
    except Exception:
        return False


def _lost_alone(fn, i: int, logits, reqs: list[Req], stopped: torch.Tensor) -> bool:
    """Whether row i, as the only row of a batch, still comes back as the chain stopped early: a rebound name
    loses the links whatever the batch, a copy made for every row loses only the rows before the last."""
    try:
        return _close(_call(fn, logits[i : i + 1], reqs[i : i + 1])[0], stopped)
    except Exception:
        return False


def lost_links(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i is the chain stopped early, on this batch and on the same batch made to
    sample; None otherwise. A row with a penalty below neutral is asked first whether the answer gets it
    right with that penalty above neutral: then its changes do reach the tensor (neutral.py names it)."""
    if _forgot_min_p_in_the_shortcut(got, logits, reqs):
        return None  # a batch where min_p is the only link, returned as given: the shortcut's mistake
    if right_above_neutral(fn, i, logits, reqs, min_p):
        return None  # the links do reach the tensor: only the penalties below neutral were skipped (neutral.py)
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
        if not _later_link_lost(fn, i, logits, reqs, stopped, min_p):
            return None  # a link added after them reaches the row: the name was not rebound (copy_writes.py)
        if not _lost_with_an_output(fn, i, logits, reqs, after_repetition, min_p):
            return None  # lost only while the output is empty: the first token skipped, not a rebound name
        if len(reqs) > 1 and not _lost_alone(fn, i, logits, reqs, stopped):
            return None  # kept when the row is alone: lost to a copy made for each row (copy_per_row.py)
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
