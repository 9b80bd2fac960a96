"""Writes min_p's cut on the logits, logit / T >= max(logit / T) + log(min_p), but takes the log
with math.log10. p >= min_p * max(p) turns into that cut through the softmax's exp, so the log must
be the natural one: log10(min_p) is 2.3 times closer to 0, the cut sits too near the top, and tokens
whose probability is above min_p times the top one's are dropped. For one row with min_p=0.1,
temperature 1 and logits [4, 2.2, 1.95, 1.0], the answer keeps 4, 2.2 and 1.95 (cut at 4 - 2.30);
this one keeps only 4 (cut at 4 - 1)."""

from __future__ import annotations

import math

import torch
import xgrammar

MUST_FAIL = {
    "stretch: min_p is relative to the most likely token",
    "stretch: min_p at the row's temperature",
    "stretch: min_p after the other links",
    "stretch: a token exactly at the threshold stays",
    "stretch: generated: 200 batches against the package's chain",
}
MUST_SAY = "used log10(min_p), not ln(min_p)"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the natural log, not math.log10"


def process_logits(logits, reqs):
    def uses_chain(req):
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        # min_p on the logits: keep logit / T >= max / T + log(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row.masked_fill_(scaled < scaled.max() + math.log10(min_p), float("-inf"))
    return out
