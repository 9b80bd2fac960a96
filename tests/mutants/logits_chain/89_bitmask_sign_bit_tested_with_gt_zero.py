"""Reads the grammar's bitmask with one mask per bit, `(word & (1 << j)) > 0`, the shifts made with
`torch.arange(32, dtype=torch.int32)` like the bitmask. In int32, 1 << 31 is -2**31, and a word whose bit 31
is set is negative, so `word & (1 << 31)` is negative, never > 0: token 32k + 31 of every word is forbidden
even where the grammar allows it. The test is != 0 (or (word >> j) & 1). Invisible on a 12-token vocabulary."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"grammar mask, greedy rows too"}
MUST_SAY = "Only bit 31 of a word was read wrong"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only the sign bit (bit 31 of a word"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

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
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            flags = 1 << torch.arange(32, dtype=torch.int32)  # bit j of a word
            allowed = ((bitmask[0, :, None] & flags) > 0).flatten()[:vocab]
            row[~allowed] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
