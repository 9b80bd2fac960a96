"""Takes min_p's reference probability, the top token's, from the model's logits, and filters the
chain's row with it. After a penalty or a bias the most likely token is another one, with another
probability: the threshold is min_p times the top probability of the distribution the sampler will
draw from, the row after links 1 to 4."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"stretch: generated: 200 batches against the package's chain"}
MUST_SAY = "min_p"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "threshold came from the top probability of the logits you were given"


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
        if min_p > 0 and not sp.is_greedy:
            # the threshold from the model's own top token, the filter on the chain's row
            top = torch.softmax(logits[i].float() / sp.temperature, dim=-1).max()
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * top] = float("-inf")
    return out
