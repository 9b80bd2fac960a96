"""min_p's probabilities taken over the wrong axis: across the rows of the batch (softmax(..., dim=0))
instead of over each row's vocabulary.

A softmax over the batch gives each token its share of the column, not of the row: on a batch of one
row every share is 1, so nothing is dropped; on two rows the cut depends on the other row. So
`over_the_batch` runs the answer on two small batches of its own, with row i's temperature and
min_p and no other link: one row alone, and that row beside a second row (its logits reversed). It
names the mistake when the answer drops nothing alone where the vocabulary's softmax drops tokens,
and beside the second row drops exactly what a softmax over the batch drops. `shortcut_confirmed`
asks the question the "nothing to do" shortcut's hint rests on: with a row that has a repetition
penalty added (so any shortcut runs the chain), the answer's min_p rows come out right.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _close_all,
    _describe,
    _first_difference,
    _min_p_of,
    _reference,
    _req,
)

PROBE = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]  # both rows finite everywhere

AXIS_HINT = (
    "the probabilities are over the vocabulary of each row: softmax(row / T, dim=-1), never across the rows "
    "of the batch (dim=0)"
)


def _batch_axis(rows: torch.Tensor, temperature: float, min_p: float) -> torch.Tensor:
    """`rows` with min_p decided on a softmax over the batch (dim=0), the mistake this module names."""
    probs = torch.softmax(rows / temperature, dim=0)
    drop = probs < min_p * probs.max(dim=-1, keepdim=True).values
    return rows.masked_fill(drop, float("-inf"))


def over_the_batch(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when the answer's min_p is a softmax across the batch's rows; None otherwise."""
    sp = reqs[i].sampling_params
    if not min_p or _min_p_of(sp) <= 0 or sp.is_greedy:
        return None
    m, temperature = _min_p_of(sp), sp.temperature
    one = torch.tensor([PROBE])
    two = torch.tensor([PROBE, PROBE[::-1]])
    probe = _req(temperature=temperature, min_p=m)
    predicted = _batch_axis(two, temperature, m)
    right_one, right_two = _reference(one, [probe], True), _reference(two, [probe, probe], True)
    if _close(right_one[0], one[0]) or _close_all(predicted, right_two) or _close_all(predicted, two):
        return None  # the probes would not tell this mistake apart
    try:
        alone, beside = _call(fn, one, [probe]), _call(fn, two, [probe, probe])
    except Exception:
        return None
    if not _close(alone[0], one[0]) or not _close_all(beside, predicted):
        return None
    dropped = [t for t in range(len(PROBE)) if bool(torch.isneginf(beside[0, t])) and t in _kept(right_two[0])]
    return (
        f"row {i} ({_describe(reqs[i])}): min_p's probabilities were taken across the rows of the batch, not over "
        f"the row's vocabulary ({_first_difference(got[i], want[i], logits[i])}). Alone in a batch with min_p {m:g} "
        f"at temperature {temperature:g}, a row lost no token (over one row each share is 1); beside a second row "
        f"it lost tokens {dropped} that its own softmax keeps: the cut followed the other row",
        AXIS_HINT,
    )


def _kept(row: torch.Tensor) -> list[int]:
    return [t for t in range(row.shape[-1]) if bool(torch.isfinite(row[t]))]


def shortcut_confirmed(fn, logits: torch.Tensor, reqs: list[Req]) -> bool:
    """Whether the answer gets every row right once a row with a repetition penalty joins the batch:
    then its shortcut ("nothing to do") is what skipped min_p here."""
    more, extra = torch.cat([logits, logits[:1]]), _req((1,), (), repetition_penalty=2.0)
    try:
        got = _call(fn, more, reqs + [extra])
    except Exception:
        return False
    return _close_all(got[: len(reqs)], _reference(more, reqs + [extra], True)[: len(reqs)])
