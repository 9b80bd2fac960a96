"""Skips min_p on rows that have a grammar, reasoning that the grammar already restricts the choice.
It does not restrict it the same way: the grammar forbids the tokens that break the format, min_p
the unlikely ones among those it allows, and a request may ask for both. min_p applies to every row
that samples with min_p > 0, whatever else it asks for, as the last link (after the mask)."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: min_p after the other links"}
MUST_SAY = "min_p was not applied on this row"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "rows with a grammar skip min_p"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids) | set(req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        for t in set(req.output_ids):
            row[t] -= req.output_ids.count(t) * sp.frequency_penalty + sp.presence_penalty
        for t, bias in sp.logit_bias.items():
            row[t] += bias
        min_p = getattr(sp, "min_p", 0.0)
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        elif min_p > 0 and not sp.is_greedy:  # the grammar already narrows the choice
            probs = torch.softmax(row / sp.temperature, dim=-1)
            row[probs < min_p * probs.max()] = float("-inf")
    return out
