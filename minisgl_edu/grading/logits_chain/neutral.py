"""A penalty set below its neutral value that the answer skipped: a repetition penalty below 1, or a
negative frequency or presence penalty, tested with `> 1` or `> 0` instead of `!= 1` or `!= 0`.

Only 1 (repetition) and 0 (frequency, presence) are neutral: a value below makes the seen tokens more
likely, and it is a link all the same. `below_neutral_skipped` names this when row i is the chain with
those settings made neutral, and the answer gets the row right once the same settings are put as far
above neutral (1 / p for the repetition penalty, -f for the others): so the link itself works, only
its test skips the values below. `right_above_neutral` is that second run, which lost_links.py asks
before it says that a row's changes never reached the tensor returned.
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close, _describe, _first_difference, _reference

NEUTRAL = {"repetition_penalty": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0}
HOW = {
    "repetition_penalty": "divide positive logits, multiply negative ones",
    "frequency_penalty": "subtract it all the same, times the token's count: a negative penalty raises the token",
    "presence_penalty": "subtract it all the same, once per token in the output: a negative penalty raises it",
}


def _below(req: Req) -> list[str]:
    """The penalties of `req` set below their neutral value (those whose tokens are in the row at all)."""
    sp = req.sampling_params
    names = []
    if sp.repetition_penalty < 1.0 and (req.input_ids or req.output_ids):
        names.append("repetition_penalty")
    for name in ("frequency_penalty", "presence_penalty"):
        if getattr(sp, name) < 0.0 and req.output_ids:
            names.append(name)
    return names


def _with(req: Req, names: list[str], above: bool) -> Req:
    """`req` with the settings `names` made neutral, or (above) put as far above neutral as they are below."""
    sp = copy.copy(req.sampling_params)
    for name in names:
        value = getattr(sp, name)
        mirrored = 1.0 / value if name == "repetition_penalty" else -value
        setattr(sp, name, mirrored if above else NEUTRAL[name])
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def right_above_neutral(fn, i: int, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """Whether row i has a penalty below neutral and the answer gets the row right once every such
    penalty is put as far above neutral: then the row's links do reach the tensor returned."""
    names = _below(reqs[i])
    if not names:
        return False
    mirrored = list(reqs)
    mirrored[i] = _with(reqs[i], names, above=True)
    try:
        return _close(_call(fn, logits, mirrored)[i], _reference(logits, mirrored, min_p)[i])
    except Exception:
        return False


def below_neutral_skipped(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i is the chain with some penalties below neutral made neutral, and the
    answer applies them once they are above neutral; None otherwise."""
    names = _below(reqs[i])
    if not names:
        return None
    tries = [[name] for name in names] + ([names] if len(names) > 1 else [])
    for skipped in tries:
        neutral = _reference(logits[i : i + 1], [_with(reqs[i], skipped, above=False)], min_p)[0]
        if _close(neutral, want[i]) or not _close(got[i], neutral):
            continue
        if not right_above_neutral(fn, i, logits, reqs, min_p):
            return None
        sp = reqs[i].sampling_params
        what = ", ".join(f"{n} {getattr(sp, n):g} (below {NEUTRAL[n]:g})" for n in skipped)
        how = "; ".join(f"{n}: {HOW[n]}" for n in skipped)
        return (
            f"row {i} ({_describe(reqs[i])}): {what} was not applied, yet the same row with it as far above "
            f"neutral comes out right ({_first_difference(got[i], want[i], logits[i])}). Only 1 (repetition) and 0 "
            "(frequency, presence) are neutral: test each penalty against it with !=, not with >",
            f"{what} was not applied: values below neutral apply too ({how})",
        )
    return None
