"""The grammar's bitmask read a word at a time: a token allowed when its 32-bit word is non-zero.

Where this sits: check.py calls `read_by_word` when chain.py's known mistakes say a row's mask was
not applied at all. With the unit cases' 12 tokens the whole mask is one word, so an answer that
unpacks the bitmask per word (`bitmask.repeat_interleave(32) != 0`) lets every token through as
soon as the grammar allows one, and its row looks exactly like a mask left out. Before it is named,
the answer runs once more on a row of its own over 40 tokens (two words, the grammar's tokens all in
word 0): a skipped mask keeps all 40 tokens, a mask read per word keeps tokens 0 to 31 and puts -inf
on the 8 tokens of the empty word 1.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    NEG_INF,
    WIDE,
    _call,
    _close,
    _describe,
    _grammar,
    _reference,
    _req,
    allowed_tokens,
)


def _per_word(req: Req, before: torch.Tensor) -> torch.Tensor:
    """`before` (the row after the other links) with -inf on every token whose whole 32-bit word of
    the bitmask is 0: the mask as a per-word reading applies it."""
    vocab = before.shape[-1]
    allowed = allowed_tokens(req.grammar, vocab)
    padded = torch.zeros(-(-vocab // 32) * 32, dtype=torch.bool)
    padded[:vocab] = allowed
    word_set = padded.view(-1, 32).any(dim=1).repeat_interleave(32)[:vocab]
    out = before.clone()
    out[~word_set] = NEG_INF
    return out


def _reads_by_word(fn) -> bool:
    """On a row of its own over 40 tokens (a sampling row with only a grammar), the answer keeps the
    tokens of word 0, which the grammar's tokens share, and drops only the tokens of the empty word 1."""
    logits = torch.linspace(-1.0, 1.0, WIDE).unsqueeze(0)
    reqs = [_req(grammar=_grammar(vocab=WIDE), temperature=1.0)]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False
    return _close(got[0], _per_word(reqs[0], logits[0].float()))


def read_by_word(fn, i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req]) -> Optional[tuple[str, str]]:
    """(message, hint) when row i kept every token of each bitmask word that has any bit set and the
    answer does the same on the 40-token probe; None otherwise."""
    req = reqs[i]
    if req.grammar is None or fn is None:
        return None
    unmasked = Req(req.uid, list(req.input_ids), req.sampling_params, list(req.output_ids), grammar=None)
    before = _reference(logits[i : i + 1], [unmasked], False)[0]  # the row after every link but the mask
    if not _close(got[i], _per_word(req, before)) or not _reads_by_word(fn):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): every token of a 32-bit word whose bits are not all 0 was let through: on a row of its own "
        f"over {WIDE} tokens (two words, the grammar's tokens in word 0), your function kept all of tokens 0 to "
        "31 and forbade only word 1's. A non-zero word means that at least one of its 32 tokens is allowed, not "
        "all of them",
        "a token's own bit decides, not whether its word is non-zero: token t is allowed when "
        "(bitmask[t // 32] >> (t % 32)) & 1 is 1, so unpack the 32 bits of each word before comparing",
    )
