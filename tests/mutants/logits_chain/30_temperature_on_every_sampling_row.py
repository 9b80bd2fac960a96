"""Ends by dividing every row that samples by its temperature ("process_logits hands the sampler
the logits it draws from, logits / T"), whether or not the request asks for a penalty, a bias or a
grammar; greedy rows are left alone. The sampler divides by the temperature itself after the chain
(the contract: "Then the sampler applies temperature, top-k and top-p"), so each sampled row is
drawn at T squared, and a row that asks for nothing no longer comes out unchanged. Differs e.g. for
a plain row at temperature 0.8: the reference returns it as the model gave it, this answer divided
by 0.8."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"a row that asks for nothing comes out unchanged", "logit_bias is added"}
MUST_SAY = "this row came back divided by its temperature"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "temperature is the sampler's, not a link of the chain"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    out = logits.float().clone()  # never change `logits`: the logprobs are taken from it
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]  # `row` is a view: changing it changes `out`
        # 1. repetition: once for every token seen in the prompt or the output
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        # 2. frequency and presence: counts in the output only
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        # 3. logit bias: added
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        # 4. the grammar's mask, whatever the temperature
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        # 5. (stretch, not in the engine) min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
        # the sampler draws from logits / T: hand it those
        if not sp.is_greedy:
            row /= sp.temperature
    return out
