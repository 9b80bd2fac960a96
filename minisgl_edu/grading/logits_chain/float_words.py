"""The grammar's bitmask words unpacked through floating point: right on small words, wrong on large ones.

Where this sits: mask_bits.py's `wrong_bits` asks `read_through_floats` once it knows that a row's only
difference is which tokens the mask let through, and that the row is just as wrong on its own. A bitmask
word is a 32-bit int: a grammar that allows most tokens of a word makes it negative (bit 31 set; -1 is all
32 tokens allowed) or larger than 2**24. Unpacking it as `(w / 2**j).int() % 2` goes through float32,
whose 24 significant bits hold a small word exactly (a grammar of a few tokens) but round a large word's
low bits away, and `.int()` truncates a negative quotient toward 0 where the bits need the floor. The
reading: every token read wrong lies in a word that is negative or at least 2**24, so the words a
float holds exactly all came out right.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Req

BIG = 2**24  # float32's significand: every int of at most 24 bits is exact, larger ones are rounded


def _words(req: Req, vocab: int) -> list[int]:
    """The row's bitmask words, as the grammar fills them."""
    import xgrammar as xgr

    bitmask = xgr.allocate_token_bitmask(1, vocab)
    req.grammar.fill_mask(bitmask, 0)
    return [int(w) for w in bitmask[0]]


def _kind(word: int) -> str:
    if word == -1:
        return "all 32 tokens allowed"
    return "negative as an int32: bit 31 is set" if word < 0 else "above 2**24"


def read_through_floats(req: Req, vocab: int, wrong: list[int]) -> Optional[tuple[str, str]]:
    """(what to add to the message, hint) when every token of `wrong` (read with the wrong bit) lies in a
    bitmask word that is negative or at least 2**24; None otherwise (a small word was read wrong too)."""
    words = _words(req, vocab)
    bad = sorted({t // 32 for t in wrong})
    if not bad or not all(words[k] < 0 or words[k] >= BIG for k in bad):
        return None
    which = "; ".join(f"word {k} is {words[k]} ({_kind(words[k])})" for k in bad)
    small = [k for k, w in enumerate(words) if 0 <= w < BIG and k not in bad]
    plural = "s" if len(small) > 1 else ""
    right = f", while word{plural} {', '.join(map(str, small))}, below 2**24, came out right" if small else ""
    return (
        f"Every token read wrong is in a word that a float32 does not hold as it is: {which}{right}. A word unpacked through floating point, (w / 2**j) in float32, keeps only 24 "
        "significant bits, and .int() truncates a negative word's quotient toward 0",
        "a bitmask word is a 32-bit int that may be -1 (all its tokens allowed) or above 2**24: float division "
        "(w / 2**j in float32) loses its low bits and .int() truncates negative words; read bit j with integers, "
        "(w >> j) & 1, or let xgrammar.apply_token_bitmask_inplace apply the mask",
    )
