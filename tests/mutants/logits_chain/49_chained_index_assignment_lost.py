"""Applies the repetition penalty with chained indexing, `row[seen][values > 0] /= p`: with `seen` a tensor,
`row[seen]` is advanced indexing, which returns a new tensor (a copy). The division changes that copy,
which is thrown away, so the repetition penalty never reaches the row, while the links after it do. Index
once (row[seen] = torch.where(...), x[i, idx] = v) or use index_put_/scatter_."""

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"repetition penalty: prompt and output tokens"}
MUST_SAY = "returned as a copy, then never read that copy again"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "writes into a copy when idx is a tensor/list (advanced indexing)"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
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
            row[seen][values > 0] /= sp.repetition_penalty
            row[seen][values <= 0] *= sp.repetition_penalty

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

        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
