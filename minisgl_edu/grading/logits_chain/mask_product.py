"""The grammar's mask multiplied in rather than written: a row whose grammar tokens came out NaN (exercise 7).

A student who turns the bitmask into 0/1 numbers may apply it as `row += (~allowed).float() * float("-inf")`,
"-inf on the forbidden tokens, + 0 on the others". But in floating point 0 * -inf is NaN, not 0, so every
token where the 0/1 mask is 0 becomes NaN: with `~allowed` those are exactly the tokens the grammar ALLOWS,
and the sampler gets a row of NaN and -inf (`allowed` times -inf puts the NaN on the forbidden tokens and
-inf on the allowed ones instead). `times_inf` recognises such a row by its NaN alone: they sit on exactly
the tokens the grammar allows, or exactly those it forbids. `check_rows` (check.py) and the generated
case's hint (scenes.py) ask it for a wrong row that has a grammar.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import allowed_tokens

MASK_PRODUCT_HINT = (
    "the tokens the grammar {side} became NaN because 0 * -inf is NaN, not 0: multiplying a 0/1 mask by -inf and "
    "adding it to the row turns every entry where the mask is 0 into NaN. Set the forbidden entries to -inf "
    "instead, row.masked_fill_(~allowed, float('-inf')) or row[~allowed] = float('-inf'), and leave the allowed "
    "ones as they are"
)


def times_inf(got: torch.Tensor, req: Req) -> Optional[tuple[str, str]]:
    """What a row `got` of a request with a grammar shows when its mask was multiplied by -inf, and the hint:
    the NaN are exactly the tokens the grammar allows (or exactly those it forbids); None when they are not."""
    nan = torch.isnan(got)
    if req.grammar is None or not bool(nan.any()):
        return None
    allowed = allowed_tokens(req.grammar, got.shape[-1])
    if torch.equal(nan, allowed):
        side, other = "allows", "those it forbids are -inf"
    elif torch.equal(nan, ~allowed):
        side, other = "forbids", "those it allows are -inf (the mask is also the wrong way round)"
    else:
        return None
    tokens = nan.nonzero().flatten().tolist()
    said = (
        f"every token the grammar {side} came out NaN (tokens {tokens}), and {other}: the mask was multiplied by "
        "-inf (mask * float('-inf') added to the row), and 0 * -inf is NaN, so the entries the 0/1 mask leaves "
        "at 0 do not stay as they were"
    )
    return said, MASK_PRODUCT_HINT.format(side=side)


def mask_times_inf(i: int, got: torch.Tensor, reqs: list[Req], where: str) -> Optional[tuple[str, str]]:
    """The message and hint for wrong row i (`where` says which) when its mask was multiplied by -inf."""
    found = times_inf(got[i], reqs[i])
    return None if found is None else (f"{where}: {found[0]}", found[1])
