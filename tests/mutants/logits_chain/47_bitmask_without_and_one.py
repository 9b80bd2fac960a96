"""Reads token t's bit of the grammar's bitmask as `word >> (t % 32)` without `& 1`: the shifted word
is non-zero whenever any higher bit is set, so a token is allowed when any token after it in the same
32-bit word is. Token t is allowed only when (word >> (t % 32)) & 1, the lowest bit after the shift,
is 1."""

import math

import torch
import xgrammar

MUST_FAIL = {"grammar mask, greedy rows too"}
MUST_SAY = "allowed although"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test (word >> (t % 32)) & 1"


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
            words = bitmask[0].tolist()
            for t in range(vocab):
                if not (words[t // 32] >> (t % 32)):
                    row[t] = float("-inf")
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
