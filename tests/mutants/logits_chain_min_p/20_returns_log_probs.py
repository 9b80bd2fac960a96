"""Cuts the right tokens with min_p, then returns the row as log-probabilities (log_softmax of what is
left) instead of the logits. min_p only sets the tokens below its threshold to -inf: every other
logit stays as the chain left it. The sampler divides what process_logits returns by the
temperature and takes the softmax itself, so log-probabilities are a different row: at temperature
1 the draw happens to agree, but at any other temperature the distribution changes (and the
logprobs a client sees stay the model's, so nothing needs normalising here)."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: min_p is relative to the most likely token"}
MUST_SAY = "a kept token's logit changed"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_p only sets the cut tokens to -inf and keeps every other logit as it was"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids) | set(req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        for t in set(req.output_ids):
            row[t] -= req.output_ids.count(t) * sp.frequency_penalty + sp.presence_penalty
        for t, bias in sp.logit_bias.items():
            row[t] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            logp = torch.log_softmax(row / sp.temperature, dim=-1)
            logp[logp < logp.max() + math.log(min_p)] = float("-inf")
            out[i] = torch.log_softmax(logp, dim=-1)  # renormalise over the tokens that are left
    return out
