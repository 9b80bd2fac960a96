"""The grammar's bitmask used whole: ceil(vocab / 32) * 32 flags for a row of `vocab` logits.

The bitmask holds whole 32-bit words, so when the vocabulary is not a multiple of 32 its last word
has padding bits past the last token. An answer that unpacks every bit and masks the row with all
of them gets a mask longer than the row: an index error on every grammar row (the unit cases'
vocabulary has 12 tokens). `padded_mask` asks, when the answer raised on a batch with a grammar,
whether it raises on a grammar row of 12 tokens of its own yet gets the same kind of row right on
a vocabulary of exactly 32 tokens, where there is no padding: then the padding is what it used.
bitmask_rows.py asks it after its own question, before the error goes on to the student.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.logits_chain.chain import _call, _close_all, _grammar, _reference


def _probe(vocab: int) -> tuple[torch.Tensor, list[Req]]:
    """One greedy row of `vocab` logits whose only link is the yes/no grammar."""
    logits = torch.linspace(-1.0, 1.0, vocab).unsqueeze(0)
    return logits, [Req(0, [11], SamplingParams(temperature=0.0), [], grammar=_grammar(vocab=vocab))]


def _raises(fn: Callable, vocab: int) -> bool:
    logits, reqs = _probe(vocab)
    try:
        _call(fn, logits, reqs)
    except Exception:
        return True
    return False


def _right(fn: Callable, vocab: int) -> bool:
    logits, reqs = _probe(vocab)
    try:
        return _close_all(_call(fn, logits, reqs), _reference(logits, reqs, False))
    except Exception:
        return False


def padded_mask(fn: Callable, reqs: list[Req], what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when a batch with a grammar raised, the answer raises on a 12-token grammar row of
    its own and gets a 32-token one right; None otherwise."""
    if all(r.grammar is None for r in reqs) or not _raises(fn, 12) or not _right(fn, 32):
        return None
    return (
        f"{what}. On a grammar row of 12 tokens of its own your function raises too, yet on a vocabulary of "
        "exactly 32 tokens it gets the row right: the bitmask has whole 32-bit words, ceil(vocab / 32) * 32 bits, "
        "and the bits past the last token are padding. Unpack the bits, then keep the first vocab of them",
        "the unpacked bitmask has ceil(vocab / 32) * 32 flags, more than the row's vocab tokens: cut it to the "
        "vocabulary, bits.flatten()[:vocab], before you mask the row with it",
    )
