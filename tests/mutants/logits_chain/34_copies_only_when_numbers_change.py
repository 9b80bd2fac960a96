"""Copies the logits only when some row has a penalty, a bias or min_p ("those compute new numbers;
a mask only writes -inf where the grammar forbids"), so in a batch where grammars are the only link
the mask's -inf go straight into the tensor it was given. The engine takes the logprobs from that
tensor after the chain: every token the grammar forbids would report a logprob of -inf instead of
the model's. Only a batch that no link touches may come back as the very tensor it was given."""

import math

import torch
import xgrammar as xgr

MUST_FAIL = {"the input tensor is not changed"}
MUST_SAY = "masking in place is a change too"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only the grammar's mask changed the tensor you were given: the mask must go on a copy too"


def _changes_numbers(sp):
    penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
    return penalties or bool(sp.logit_bias) or (getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy)


def process_logits(logits, reqs):
    if not any(_changes_numbers(r.sampling_params) or r.grammar is not None for r in reqs):
        return logits
    out = logits.float().clone() if any(_changes_numbers(r.sampling_params) for r in reqs) else logits
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
            bitmask = xgr.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
