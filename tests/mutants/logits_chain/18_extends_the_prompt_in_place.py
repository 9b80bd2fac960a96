"""Gathers the tokens seen so far with `seen = req.input_ids` and `seen += req.output_ids`: `+=` on a
list extends that very list, so every call appends the output to the request's prompt. The numbers
come out right, but the scheduler keeps using req.input_ids (its length is the prompt's, its pages
are counted from it): only read the request."""

from collections import Counter

import xgrammar

MUST_FAIL = {"generated: 200 batches against the package's chain"}
MUST_SAY = "prompt in place"
CAUGHT_BY = {"generated"}
HINT_SAYS = "extends req.input_ids itself"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = req.input_ids
            seen += req.output_ids
            for t in set(seen):
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
