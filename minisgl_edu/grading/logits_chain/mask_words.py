"""The grammar's bitmask allocated with too few words: vocab // 32 instead of ceil(vocab / 32).

A bitmask holds 32 tokens a word, so a vocabulary that is not a multiple of 32 needs one more word
for its last vocab % 32 tokens: (vocab + 31) // 32, what `xgrammar.allocate_token_bitmask(1, vocab)`
makes. An answer that allocates its own bitmask with vocab // 32 words hands fill_mask a bitmask one
word short (none at all for the unit cases' 12 tokens), which fill_mask refuses. Its crash looks like
mask_padding.py's (a raise on 12 tokens, right on 32), so bitmask_rows.py asks this first:
`short_words` watches the bitmask the answer hands fill_mask on grammar rows of 12 and of 40 tokens,
and names the mistake when it had vocab // 32 words both times and the answer gets a 32-token row right.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call
from minisgl_edu.grading.logits_chain.mask_padding import _probe, _right


def _words_given(fn: Callable, vocab: int) -> Optional[int]:
    """How many words wide the bitmask was that the answer handed fill_mask on a grammar row of `vocab`
    tokens (whether or not it raised after); None when it never called fill_mask."""
    logits, reqs = _probe(vocab)
    grammar, seen = reqs[0].grammar, []
    fill = grammar.fill_mask

    def watched(bitmask: torch.Tensor, row: int) -> None:
        seen.append(int(bitmask.shape[-1]))
        fill(bitmask, row)

    grammar.fill_mask = watched  # this probe's own grammar: the answer sees the same method, watched
    try:
        _call(fn, logits, reqs)
    except Exception:
        pass
    return seen[0] if seen else None


def short_words(fn: Callable, reqs: list[Req], what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when a batch with a grammar raised and the answer hands fill_mask a bitmask of
    vocab // 32 words on 12 and 40 tokens, yet gets a 32-token row right; None otherwise."""
    if all(r.grammar is None for r in reqs):
        return None
    if _words_given(fn, 12) != 0 or _words_given(fn, 40) != 1 or not _right(fn, 32):
        return None
    return (
        f"{what}. On grammar rows of its own your function handed fill_mask a bitmask of 0 words for a vocabulary "
        "of 12 tokens and of 1 word for 40 tokens, yet it gets a vocabulary of exactly 32 tokens right: the "
        "bitmask had vocab // 32 words, rounded down, so the last vocab % 32 tokens have no bit and fill_mask "
        "refuses it. It needs ceil(vocab / 32) = (vocab + 31) // 32 words",
        "your bitmask has vocab // 32 words, one short whenever vocab is not a multiple of 32 (0 for 12 tokens): "
        "allocate ceil(vocab / 32) = (vocab + 31) // 32 words, or use xgrammar.allocate_token_bitmask(1, vocab)",
    )
