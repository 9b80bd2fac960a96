"""Puts min_p after the penalties and the bias but BEFORE the grammar's mask ("the mask is the last
link: nothing after it may bring a token back"). min_p's threshold is then taken from the top
token of the row before the mask, which may be a token the grammar forbids: every allowed token is
measured against a token that can never be picked, and tokens the sampler should keep are dropped
(or all of them, leaving nothing to sample). The contract: min_p works on "the distribution the
sampler will draw from for that row (after links 1 to 4, at the row's temperature)". Differs e.g.
for a sampling row with a grammar that forbids the model's top token, min_p 0.5."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: min_p after the other links"}
MUST_SAY = "min_p was decided before the grammar mask"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_p comes after the grammar mask"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits  # nothing to do, and no copy to pay for
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
        # 4. (stretch) min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
        # 5. the grammar's mask last, whatever the temperature: nothing after it brings a token back
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    return out
