"""Applies the repetition penalty to the tokens of the last 64 positions of the history only, as a
"recent window" (some engines have a repetition range; this contract has none). A token seen once,
early in a long prompt, keeps its logit. The repetition penalty touches every token seen in the
prompt or the output, however far back."""

from collections import Counter

import xgrammar

MUST_FAIL = {"generated: 200 batches against the package's chain"}
MUST_SAY = "however far back"
CAUGHT_BY = {"generated"}
HINT_SAYS = "however far back"

WINDOW = 64


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set((req.input_ids + req.output_ids)[-WINDOW:]):
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
