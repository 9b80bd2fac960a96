"""Adds logit_bias first, then the penalties. The repetition penalty then scales the bias too,
so the client does not get the amount it asked for: the bias comes after the penalties."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"logit_bias after the penalties"}
MUST_SAY = "the bias comes after the penalties"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "logit_bias was added before the penalties"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        for t, b in sp.logit_bias.items():
            row[t] += b
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids + req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        for t, c in Counter(req.output_ids).items():
            row[t] -= c * sp.frequency_penalty + sp.presence_penalty
    masked = [i for i, r in enumerate(reqs) if r.grammar is not None]
    if masked:
        bitmask = xgrammar.allocate_token_bitmask(len(reqs), vocab)
        for i in masked:
            reqs[i].grammar.fill_mask(bitmask, i)
        xgrammar.apply_token_bitmask_inplace(out, bitmask, indices=masked)
    for i, req in enumerate(reqs):
        sp, min_p = req.sampling_params, getattr(req.sampling_params, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * probs.max()] = float("-inf")
    return out
