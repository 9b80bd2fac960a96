"""Subtracts the frequency and presence penalties with `row = row - ...`: that binds the name `row`
to a new tensor, so the penalties, and the bias, the mask and min_p after them, change the copy and
never reach `out`. Only the repetition penalty, written in place (row[seen] = ...), shows. The row
must be changed in place (row -= ...) or written back (out[i] = row)."""

import math

import torch
import xgrammar

MUST_FAIL = {"frequency and presence: output tokens only"}
MUST_SAY = "never reached the tensor you return"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "makes a new tensor and leaves out[i] as it was"


def process_logits(logits, reqs):
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
            row = row - sp.frequency_penalty * counts - sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
