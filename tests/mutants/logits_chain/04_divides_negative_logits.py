"""Divides every seen token's logit by the repetition penalty. For a negative logit that moves it
toward 0: the token the penalty should discourage becomes more likely. Negative logits are
multiplied by the penalty."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"repetition penalty: prompt and output tokens"}
MUST_SAY = "multiply negative ones"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a negative logit was divided by the repetition penalty"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids + req.output_ids)), dtype=torch.long)
            row[seen] = row[seen] / sp.repetition_penalty
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
