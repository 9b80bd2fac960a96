"""Vectorises the penalties over the whole batch with the values of the first request that asks
for any: every other row gets that request's penalties, including rows that asked for nothing.
Each row must use its own request's values, and a plain row must come out unchanged."""

import torch
import xgrammar

MUST_FAIL = {"only the rows that ask, each with its own values"}
MUST_SAY = "asks for nothing"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "row i uses reqs[i].sampling_params and nothing else"


def process_logits(logits, reqs):
    out = logits.float().clone()
    vocab = out.shape[-1]
    asking = [r.sampling_params for r in reqs if r.sampling_params.has_penalties]
    if asking:
        sp = asking[0]
        seen = torch.zeros_like(out, dtype=torch.bool)
        counts = torch.zeros_like(out)
        for i, req in enumerate(reqs):
            seen[i, req.input_ids + req.output_ids] = True
            for t in req.output_ids:
                counts[i, t] += 1
        if sp.repetition_penalty != 1.0:
            scaled = torch.where(out > 0, out / sp.repetition_penalty, out * sp.repetition_penalty)
            out = torch.where(seen, scaled, out)
        out = out - sp.frequency_penalty * counts - sp.presence_penalty * (counts > 0).float()
    for i, req in enumerate(reqs):
        for t, b in req.sampling_params.logit_bias.items():
            out[i, t] += b
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
