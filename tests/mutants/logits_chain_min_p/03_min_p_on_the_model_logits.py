"""Stretch: decides which tokens min_p keeps from the model's logits, before the bias and the mask.
When the bias bans the model's favourite or the grammar forbids it, min_p measures every allowed
token against a token that can never be picked, and can drop them all."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"stretch: min_p after the other links"}
MUST_SAY = "it is the last link"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_p was decided on the logits you were given, before the other links"


def process_logits(logits, reqs):
    drop = torch.zeros(logits.shape, dtype=torch.bool)
    for i, req in enumerate(reqs):
        sp, min_p = req.sampling_params, getattr(req.sampling_params, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            probs = torch.softmax(logits[i].float() / sp.temperature, dim=-1)
            drop[i] = probs < min_p * probs.max()
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids + req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        for t, c in Counter(req.output_ids).items():
            row[t] -= c * sp.frequency_penalty + sp.presence_penalty
        for t, b in sp.logit_bias.items():
            row[t] += b
    masked = [i for i, r in enumerate(reqs) if r.grammar is not None]
    if masked:
        bitmask = xgrammar.allocate_token_bitmask(len(reqs), vocab)
        for i in masked:
            reqs[i].grammar.fill_mask(bitmask, i)
        xgrammar.apply_token_bitmask_inplace(out, bitmask, indices=masked)
    return out.masked_fill(drop, float("-inf"))
