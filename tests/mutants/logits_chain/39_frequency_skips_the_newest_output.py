"""Counts frequency and presence over req.output_ids[:-1], leaving out the newest output token, as if
it were the token being sampled now. It is not: when process_logits runs, req.output_ids holds the
tokens already generated, the newest included (it was sampled at the last step), and the token
about to be sampled is not in it yet. So the token just generated escapes both penalties, the very
one a frequency penalty should hold back from being repeated at once."""

from __future__ import annotations

from collections import Counter

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"frequency and presence: output tokens only"}
MUST_SAY = "some output tokens were not counted by the frequency/presence penalty"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the newest one, req.output_ids[-1]"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            for t in set(req.input_ids) | set(req.output_ids):
                row[t] = row[t] / sp.repetition_penalty if row[t] > 0 else row[t] * sp.repetition_penalty
        history = req.output_ids[:-1]  # the last one is the token being sampled now
        for t, count in Counter(history).items():
            row[t] -= count * sp.frequency_penalty + sp.presence_penalty
        for t, bias in sp.logit_bias.items():
            row[t] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    return out
