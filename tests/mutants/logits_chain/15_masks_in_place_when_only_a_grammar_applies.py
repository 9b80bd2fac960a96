"""Copies the logits only when a penalty or a bias changes numbers, and writes a grammar's -inf
straight into the tensor it was given otherwise ("the mask computes nothing, so why copy?"). The
engine takes the logprobs from that tensor after the chain: in a batch where only grammars apply,
every forbidden token would report a logprob of -inf instead of the model's."""

from collections import Counter

import xgrammar

MUST_FAIL = {"the input tensor is not changed"}
MUST_SAY = "masking in place is a change too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a mask or a min_p filter alone included"


def process_logits(logits, reqs):
    changes_numbers = any(r.sampling_params.has_penalties or r.sampling_params.logit_bias for r in reqs)
    out = logits.float().clone() if changes_numbers else logits
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
    return out
