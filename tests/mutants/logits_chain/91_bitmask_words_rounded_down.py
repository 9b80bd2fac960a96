"""Allocates the grammar's bitmask itself, all bits set, with vocab // 32 words ("32 tokens a word"),
rounding down instead of up (ceil(vocab / 32), what xgrammar.allocate_token_bitmask makes). When
the vocabulary is not a multiple of 32 the last vocab % 32 tokens have no bit: the mask is short (a
vocabulary under 32 tokens gets no word at all) and those tokens are never masked or fill_mask refuses."""

from __future__ import annotations

import torch

from minisgl_edu.core import Req

MUST_FAIL = {"grammar mask, greedy rows too"}
MUST_SAY = "the bitmask had vocab // 32 words, rounded down"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "allocate ceil(vocab / 32) = (vocab + 31) // 32 words"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        return penalties or bool(sp.logit_bias) or req.grammar is not None

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            words = vocab // 32  # 32 tokens per int32 word
            bitmask = torch.full((1, words), -1, dtype=torch.int32)  # every bit set: all allowed
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            allowed = bits.flatten()[:vocab].bool()
            row[: allowed.numel()][~allowed] = float("-inf")
    return out
