"""Vectorises the frequency and presence penalties with one value per row, `freq = torch.tensor([...])` of
shape [N], and subtracts `freq * counts` from the [N, vocab] logits. Broadcasting lines a [N] tensor up with
the LAST dimension, the vocabulary, not the rows: a batch of one row works, any other batch raises (and with
N == vocab each token gets another row's penalty). Per-row values must be a column: freq[:, None]."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"frequency and presence: output tokens only", "a batch that uses every link"}
MUST_SAY = "gave row i, token t the frequency_penalty of row t"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "broadcast over the vocabulary, not over the rows: make them a column of shape [N, 1]"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    # 1. repetition, row by row
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
    # 2. frequency and presence, the whole batch at once
    counts = torch.zeros(len(reqs), vocab, dtype=out.dtype)
    for i, req in enumerate(reqs):
        if req.output_ids:
            counts[i] = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(out.dtype)
    freq = torch.tensor([r.sampling_params.frequency_penalty for r in reqs], dtype=out.dtype)
    presence = torch.tensor([r.sampling_params.presence_penalty for r in reqs], dtype=out.dtype)
    out -= freq * counts + presence * (counts > 0).to(out.dtype)
    # 3. bias, 4. mask, 5. min_p, row by row
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
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
