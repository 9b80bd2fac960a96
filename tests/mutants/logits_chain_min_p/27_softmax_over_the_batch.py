"""Decides min_p for the whole batch at once with `torch.softmax(out / temperatures, dim=0)`: the
softmax runs across the rows of the batch, so each token gets its share of the column, not of its
row. On a batch of one row every share is 1 and nothing is dropped; beside other rows the cut follows
them. min_p's probabilities are over the vocabulary of each row (dim=-1)."""

import torch
import xgrammar

MUST_FAIL = {"stretch: min_p is relative to the most likely token"}
MUST_SAY = "across the rows of the batch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "softmax(row / T, dim=-1)"


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
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    temperatures = torch.tensor([max(r.sampling_params.temperature, 1e-6) for r in reqs])[:, None]
    probs = torch.softmax(out / temperatures, dim=0)
    for i, req in enumerate(reqs):
        min_p = getattr(req.sampling_params, "min_p", 0.0)
        if min_p > 0 and not req.sampling_params.is_greedy:
            out[i][probs[i] < min_p * probs[i].max()] = float("-inf")
    return out
