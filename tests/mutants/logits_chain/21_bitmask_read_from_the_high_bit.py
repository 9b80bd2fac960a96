"""Unpacks the XGrammar bitmask from the high bit down, `word >> (31 - j)`, reading "bit j" as the
j-th bit from the left as the number is written, where bit j is `(word >> j) & 1` (the low bit is
token 32k). Every word's 32 flags come out mirrored: the tokens the grammar allows are set to -inf
and the ones it forbids are kept (a word that is all ones or all zeros is unaffected). It shows on
any grammar row whose allowed set within a word is not symmetric, such as the grader's (yes|no)
grammar on a 12-token vocabulary: the answer keeps the tokens that begin "yes"/"no", this one masks
them out (and may keep none of the 12, since bits 20..31 of the word stand for tokens past the
vocabulary)."""

from __future__ import annotations

import math

import torch
import xgrammar

MUST_FAIL = {"grammar mask, greedy rows too", "generated: 200 batches against the package's chain"}
MUST_SAY = "the grammar's bitmask was read mirrored"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "shift by j, not by 31 - j"


def process_logits(logits, reqs):
    def uses_chain(req):
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits  # nothing to do, and no copy to pay for
    out = logits.float().clone()  # never change `logits`: the logprobs are taken from it
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        # 1. repetition: once for every token seen in the prompt or the output
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        # 2. frequency and presence: counts in the output only
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        # 3. logit bias: added
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        # 4. the grammar's mask, whatever the temperature
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> (31 - torch.arange(32, dtype=torch.int32))) & 1  # bit 0 first
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        # 5. min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
