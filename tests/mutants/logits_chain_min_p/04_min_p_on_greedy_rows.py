"""Stretch: applies min_p to every row that has it, greedy ones too. A greedy row has temperature
0: dividing by it gives infinities (and NaN for a logit of 0), and the filter then throws away
tokens it was never meant to touch. min_p applies only to the rows that sample."""

import math
from collections import Counter

import xgrammar

MUST_FAIL = {"stretch: min_p leaves greedy rows alone"}
MUST_SAY = "min_p applies only to rows that sample"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "min_p applies only to rows that sample, so leave a greedy row as it is"


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
        if min_p > 0:
            scaled = out[i] / sp.temperature
            out[i][scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
