"""A logit_bias whose amounts landed on other tokens of the same logit_bias.

Where this sits: check.py's `check_rows` asks `swapped_bias` about a wrong row before the known
mistakes of mistakes.py are tried, and the generated case (scenes.py's `logits_hint`) asks
`bias_elsewhere` about the first wrong row of a scene: another row's bias that reached it (chain.py's
`_leaked_bias`), or its own amounts on other ids of its logit_bias. An answer that takes the token ids
and the amounts from two different walks over the dict (the ids sorted, as for the repetition
penalty's seen tokens, the amounts from values() in the dict's own order) adds every amount, but to
another token of the same logit_bias as soon as the client wrote the ids out of increasing order (a
JSON body may list them in any order, and SamplingParams keeps that order). The row itself shows it,
no probe is needed: it equals the reference for the same request with the amounts put in another
order on the same ids, a row no other mistake gives.
"""

from __future__ import annotations

import copy
import itertools
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import BIAS_OWN_ROW, _close, _describe, _leaked_bias, _reference, _token

MAX_IDS = 5  # at most 5! = 120 orders tried on one row; the grader's dicts have up to 3 ids

SWAPPED_HINT = (
    "the bias amounts landed on other tokens of the same logit_bias: take each id and its amount from the same "
    "items() pair (for token, bias in logit_bias.items()); sorted(logit_bias) with values() in the dict's order do "
    "not line up once the ids are not written in increasing order"
)


def _with_bias(req: Req, bias: dict[int, float]) -> Req:
    """A copy of `req` (its own token lists, the same grammar) whose logit_bias is `bias`."""
    sp = copy.copy(req.sampling_params)  # (min_p, the stretch's field, is copied with it)
    sp.logit_bias = bias
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def shown_bias(i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> Optional[dict]:
    """The logit_bias row i of `got` shows when it is row i's own amounts in another order on the same ids
    (the reference's row for that bias); None when it is not, or when no other order exists."""
    bias = reqs[i].sampling_params.logit_bias
    if not 2 <= len(bias) <= MAX_IDS or len(set(bias.values())) < 2:
        return None
    ids = list(bias)
    for amounts in itertools.permutations(bias.values()):
        shown = dict(zip(ids, amounts))
        if shown == bias:
            continue
        try:
            if _close(got[i], _reference(logits[i : i + 1], [_with_bias(reqs[i], shown)], min_p)[0]):
                return shown
        except Exception:
            return None
    return None


def swapped_bias(i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req], min_p: bool, where: str = ""):
    """(message, hint) when row i got its logit_bias amounts on other tokens of the same logit_bias; else None.
    The message starts with `where` (by default the row and its request)."""
    shown = shown_bias(i, got, logits, reqs, min_p)
    if shown is None:
        return None
    bias, where = reqs[i].sampling_params.logit_bias, where or f"row {i} ({_describe(reqs[i])})"
    moved = "; ".join(
        f"{_token(t)} got {shown[t]:g}, its own amount is {bias[t]:g}" for t in bias if shown[t] != bias[t]
    )
    return (
        f"{where}: every amount of this row's logit_bias {bias} was added, but to another token of it ({moved}): the "
        "row equals the chain's for the same amounts put in another order on the same ids",
        SWAPPED_HINT,
    )


def bias_elsewhere(i: int, got: torch.Tensor, want: torch.Tensor, logits: torch.Tensor, reqs: list[Req], stretch: bool):
    """The generated case's hint when row i got a bias on tokens it does not belong to: another row's (a leak), or
    its own amounts on other ids of its logit_bias; None otherwise."""
    if (leak := _leaked_bias(i, got, want, reqs)) is not None:
        return f"row {i}, {_token(leak[0])}: not in its own logit_bias but in row {leak[1]}'s: {BIAS_OWN_ROW}"
    swapped = swapped_bias(i, got, logits, reqs, stretch, f"row {i}")
    return "; ".join(swapped) if swapped is not None else None
