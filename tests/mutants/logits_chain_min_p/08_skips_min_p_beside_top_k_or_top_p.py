"""Applies min_p only to rows with neither top_k nor top_p, reading them as alternatives ("the
sampler cuts the distribution already"). They are not: the sampler applies top-k and top-p after the
chain, to what min_p left, and a request may ask for all three. min_p applies to every row that
samples and has min_p > 0."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"stretch: generated: 200 batches against the package's chain"}
MUST_SAY = "came back as the chain gives it without min_p"
CAUGHT_BY = {"generated"}
HINT_SAYS = "min_p applies beside them"


def process_logits(logits, reqs):
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
    for i, req in enumerate(reqs):
        sp, min_p = req.sampling_params, getattr(req.sampling_params, "min_p", 0.0)
        # top_k and top_p already cut the distribution: min_p only where neither does
        if min_p > 0 and not sp.is_greedy and sp.top_k == -1 and sp.top_p == 1.0:
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * probs.max()] = float("-inf")
    return out
