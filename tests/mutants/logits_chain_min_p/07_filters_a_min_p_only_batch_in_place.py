"""Returns the given tensor untouched when no request uses links 1 to 4 (as the engine's chain does),
then adds min_p on whatever it has: in a batch where min_p is the only link, that is the very tensor
it was given, and the -inf of min_p land in it. The engine takes the logprobs from that tensor after
the chain, so a client asking for logprobs would see -inf for every token min_p dropped. Copy before
any link writes, min_p included."""

from collections import Counter

import torch
import xgrammar

MUST_FAIL = {"stretch: generated: 200 batches against the package's chain"}
MUST_SAY = "in place"
CAUGHT_BY = {"generated"}
HINT_SAYS = "a mask or a min_p filter alone included"


def process_logits(logits, reqs):
    def links(req):
        sp = req.sampling_params
        return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None

    out = logits.float().clone() if any(links(r) for r in reqs) else logits
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
            probs = torch.softmax(out[i] / sp.temperature, dim=-1)
            out[i][probs < min_p * probs.max()] = float("-inf")
    return out
