"""Skips the whole chain when no request "asks for a penalty", testing each penalty against its
neutral value with > instead of !=: a repetition penalty below 1 or a negative frequency or presence
penalty counts as nothing. In a batch where such a request has no other link beside it, its row comes
back as the model gave it. Below-neutral penalties are links too (they make repeats more likely);
only 1 and 0 are neutral."""

from collections import Counter

import xgrammar

MUST_FAIL = {"generated: 200 batches against the package's chain"}
MUST_SAY = "came back as the model gave it"
CAUGHT_BY = {"generated"}
HINT_SAYS = "a link all the same"


def _asks(req):
    sp = req.sampling_params
    penalties = sp.repetition_penalty > 1.0 or sp.frequency_penalty > 0.0 or sp.presence_penalty > 0.0
    return penalties or bool(sp.logit_bias) or req.grammar is not None


def process_logits(logits, reqs):
    if not any(_asks(r) for r in reqs):
        return logits
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
    return out
