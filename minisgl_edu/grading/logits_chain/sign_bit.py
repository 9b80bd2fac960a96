"""The grammar's bitmask read with a signed test: every bit right but bit 31, the int32 sign bit.

Where this sits: mask_bits.py's `wrong_bits` asks `sign_bit_only` once it knows that a row's only
difference is which tokens the mask let through, before the float reading (float_words.py). A bitmask
word is an int32, and bit 31 is its sign bit: a word that allows token 32k + 31 is negative. Reading
bit j as `(word & (1 << j)) > 0`, with the shifts made in int32 like the bitmask, gets bits 0 to 30
right, but `1 << 31` is -2**31 there, so `word & (1 << 31)` is -2**31 when the bit is set, never > 0.
The reading: the answer forbade exactly the tokens at bit 31 of their word that the grammar allows,
and nothing else is wrong (a float reading of a negative word gets its other bits wrong too).
"""

from __future__ import annotations

from typing import Optional

SIGN = 31  # the bit of an int32 word that holds its sign


def sign_bit_only(allowed: list[bool], extra: list[int], lost: list[int]) -> Optional[tuple[str, str]]:
    """(what to add to the message, hint) when no token was let through wrongly (`extra` empty) and the tokens
    forbidden although the grammar allows them (`lost`) are exactly its allowed tokens at bit 31 of their word;
    None otherwise. `allowed[t]`: the grammar allows token t (and the links before the mask left it finite)."""
    at_sign = [t for t, ok in enumerate(allowed) if ok and t % 32 == SIGN]
    if extra or not lost or sorted(lost) != at_sign:
        return None
    tokens = ", ".join(str(t) for t in at_sign)
    return (
        f"Only bit 31 of a word was read wrong: token{'s' if len(at_sign) > 1 else ''} {tokens}, allowed by the "
        "grammar, came out -inf, while every other bit (0 to 30 of each word) was read right. Bit 31 is the sign bit "
        "of an int32 word: a word with it set is negative, and in int32 1 << 31 is -2**31, so word & (1 << 31) is "
        "-2**31 there, which is not > 0",
        "only the sign bit (bit 31 of a word: tokens 31, 63, ...) was read wrong: in int32, 1 << 31 is -2**31 and "
        "word & (1 << 31) is negative when the bit is set, so testing it with > 0 reads it as 0. Test != 0, or read "
        "bit j as (word >> j) & 1",
    )
