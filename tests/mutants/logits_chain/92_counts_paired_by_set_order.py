"""Counts the output tokens with a Counter but takes the token ids from set(req.output_ids) and the
counts from Counter(...).values(): a set iterates in hash order (small ints: ascending), a Counter in
first-occurrence order, so the two lists are not aligned and a token gets another token's count.
Output [3, 1, 1] pairs token 1 with count 1 and token 3 with count 2 (it should be 1:2, 3:1)."""

from __future__ import annotations

from collections import Counter

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"frequency and presence: output tokens only"}
MUST_SAY = "put them on the wrong output tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pair each token with its own count"


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
            ids = torch.tensor(list(set(req.output_ids)), dtype=torch.long)  # the distinct output tokens
            counts = torch.tensor(list(Counter(req.output_ids).values()), dtype=row.dtype)  # how often each occurs
            row[ids] -= sp.frequency_penalty * counts + sp.presence_penalty
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    return out
