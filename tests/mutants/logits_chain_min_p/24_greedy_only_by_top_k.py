"""Stretch: a row counts as greedy only when its top_k is 1, so a row of temperature 0 (greedy
too: sampling_params.is_greedy) goes through min_p and is divided by its temperature of 0 (tokens
become -inf or NaN). The sampler takes a greedy row's argmax; min_p leaves every greedy row alone, whatever
makes it greedy."""

import math

import torch
import xgrammar

MUST_FAIL = {"stretch: min_p leaves greedy rows alone"}
MUST_SAY = "its temperature of 0 cannot be divided by"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_p only on rows that sample (not sampling_params.is_greedy)"


def process_logits(logits, reqs):
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
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and sp.top_k != 1:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
