"""The grammar's bitmask read with the wrong bits: which tokens the answer allowed, against the bits.

The bitmask holds one bit per token: token t is bit t % 32 of the 32-bit word t // 32, allowed when
`(bitmask[t // 32] >> (t % 32)) & 1` is 1. Reading it without `& 1` (any higher bit set counts), from
the high end, across the words in another order or at another word all give a row that is the chain's
but for -inf put on the wrong tokens. `wrong_bits` names that class: the row is the chain's before
the mask everywhere the answer kept a token, -inf everywhere it did not, the set it kept is not the
set the bits allow, and the row is just as wrong on its own (so no other row of the batch is the
cause). It says which tokens were allowed with a bit of 0, or forbidden with a bit of 1, and where
their bits are. One reading of its own comes first: the 0/1 bits right, but used as an index while
still ints (`row[~allowed]` without .bool()): ints index positions, so only tokens -1 and -2 (or 0
and 1) get -inf; `_int_index` plays those indexings on the row and names the one that matches it. Then
bit 31 alone read wrong, the int32 sign bit tested with > 0 (sign_bit.py), and words unpacked through
floats, wrong only on words that are negative or above 2**24 (float_words.py).
"""

from __future__ import annotations

import copy
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _describe,
    _first_difference,
    _min_p_of,
    _reference,
    _token,
    allowed_tokens,
)
from minisgl_edu.grading.logits_chain.float_words import read_through_floats
from minisgl_edu.grading.logits_chain.sign_bit import sign_bit_only


def _bit(t: int) -> str:
    return f"word {t // 32}, bit {t % 32}"


def _unmasked(req: Req) -> Req:
    return Req(req.uid, list(req.input_ids), copy.copy(req.sampling_params), list(req.output_ids), grammar=None)


INT_INDEXINGS = (("~allowed", lambda b: ~b), ("1 - allowed", lambda b: 1 - b), ("allowed", lambda b: b))


def _int_index(req: Req, got_row, want_row, before) -> Optional[str]:
    """The int indexing (of INT_INDEXINGS) that gives exactly the answer's row: -inf at the positions the 0/1
    ints name, the chain's logits elsewhere; None when none does."""
    vocab = want_row.shape[-1]
    bits = allowed_tokens(req.grammar, vocab).long()
    for name, index in INT_INDEXINGS:
        played = before.clone()
        played[index(bits).unique() % vocab] = float("-inf")
        if _close(played, got_row) and not _close(played, want_row):
            return name
    return None


def wrong_bits(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i's only difference is which tokens the mask let through; None otherwise."""
    req = reqs[i]
    if req.grammar is None or (min_p and _min_p_of(req.sampling_params) > 0):
        return None
    before = _reference(logits[i : i + 1], [_unmasked(req)], min_p)[0]
    kept = torch.isfinite(got[i])
    if not bool(torch.isneginf(got[i][~kept]).all()) or not _close(got[i][kept], before[kept]):
        return None
    allowed = allowed_tokens(req.grammar, want.shape[-1]) & torch.isfinite(before)
    extra = [t for t in range(len(kept)) if kept[t] and not allowed[t]]
    lost = [t for t in range(len(kept)) if allowed[t] and not kept[t] and bool(torch.isfinite(before[t]))]
    if not extra and not lost:
        return None
    try:
        alone = _call(fn, logits[i : i + 1], reqs[i : i + 1])[0]
    except Exception:
        return None
    if not _close(alone, got[i]):
        return None  # the row depends on the other rows: not a matter of reading the bits
    where = f"row {i} ({_describe(req)})"
    detail = _first_difference(got[i], want[i], logits[i])
    as_ints = _int_index(req, got[i], want[i], before)
    if as_ints is not None:
        return (
            f"{where}: -inf went only to the positions that the mask's 0/1 values name: your row is the chain's "
            f"with -inf at the tokens row[{as_ints}] indexes when `allowed` holds ints ({detail}). A tensor of "
            "ints used as an index is a list of positions (and ~ on ints is the bitwise not: ~1 is -2, ~0 is -1)",
            "the 0/1 bits are read right, but an int tensor used as an index picks positions: turn them into "
            "booleans first (allowed = bits.bool(), then row[~allowed] = -inf)",
        )
    # bit 31 alone read wrong (a signed test); else large or negative words read as floats
    odd = sign_bit_only(allowed.tolist(), extra, lost) or read_through_floats(req, want.shape[-1], extra + lost)
    if odd is not None:
        return f"{where}: the mask let the wrong tokens through ({detail}). {odd[0]}", odd[1]
    parts = []
    if extra:
        parts.append(f"allowed although their bit is 0: {', '.join(f'{_token(t)} ({_bit(t)})' for t in extra[:4])}")
    if lost:
        parts.append(f"forbidden although their bit is 1: {', '.join(f'{_token(t)} ({_bit(t)})' for t in lost[:4])}")
    t = (extra or lost)[0]
    state = ("was allowed although its bit", "is 0") if extra else ("was forbidden although its bit", "is 1")
    return (
        f"{where}: the mask let the wrong tokens through; tokens {'; '.join(parts)} ({detail}). Token t is bit "
        "t % 32 of the 32-bit word t // 32, counted from the lowest bit",
        f"token {t} {state[0]} ({_bit(t)}) {state[1]}: token t is allowed when (bitmask[t // 32] >> (t % 32)) & 1 "
        "is 1, so test (word >> (t % 32)) & 1, the lowest bit after the shift",
    )
