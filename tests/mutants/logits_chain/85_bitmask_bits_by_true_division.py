"""Unpacks the grammar's bitmask as bit j of w = (w / 2**j).int() % 2: true division turns the int32 word into
float32, which holds only 24 significant bits, and .int() truncates toward 0. Small words come out exact, but a
word above 2**24 loses its low bits and a negative word (-1: all 32 tokens allowed) is read as mostly 0s, so the
mask forbids tokens the grammar allows; integer shifts, (w >> j) & 1, are exact."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"grammar mask, greedy rows too"}
MUST_SAY = "Every token read wrong is in a word that a float32 does not hold"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "float division (w / 2**j in float32) loses its low bits"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        return penalties or bool(sp.logit_bias) or req.grammar is not None

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    powers = 2 ** torch.arange(32)  # 1, 2, 4, ..., 2**31
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
            # bit j of word w: the integer part of w / 2**j, mod 2
            bits = (bitmask[0, :, None] / powers).int() % 2
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    return out
