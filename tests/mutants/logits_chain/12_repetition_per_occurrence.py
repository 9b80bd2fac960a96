"""Loops over the prompt and output tokens and applies the repetition penalty at every occurrence,
so a token seen three times is divided by p cubed. The repetition penalty applies once to every
token that was seen; counting occurrences is the frequency penalty's job."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"repetition penalty: prompt and output tokens"}
MUST_SAY = "it applies once to every token that was seen"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "once per distinct token id, however often it occurs"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in req.input_ids + req.output_ids:
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
        if min_p > 0 and not sp.is_greedy:
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * probs.max()] = float("-inf")
    return out
