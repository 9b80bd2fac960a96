"""Stretch: vectorises min_p over its rows and divides them as `out[rows] / temps`, temps 1-D (one temperature
per row), without [:, None]. Broadcasting lines a 1-D tensor up with the LAST dimension, the vocabulary: with one
min_p row it is a scalar and all is right, with several rows the shapes do not match and the call raises. Each
row must be divided by its own temperature: temps[:, None]."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: min_p is relative to the most likely token", "stretch: min_p after the other links"}
MUST_SAY = "must match the size of tensor b"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a vector that needs [:, None] to broadcast"


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
    # 5. min_p, on every sampling row that uses it at once: logit / T >= max / T + ln(min_p)
    rows = [
        i
        for i, r in enumerate(reqs)
        if getattr(r.sampling_params, "min_p", 0.0) > 0 and not r.sampling_params.is_greedy
    ]
    if rows:
        temps = torch.tensor([reqs[i].sampling_params.temperature for i in rows])
        log_min_p = torch.tensor([math.log(reqs[i].sampling_params.min_p) for i in rows])[:, None]
        sub = out[rows]
        scaled = sub / temps
        sub[scaled < scaled.max(dim=-1, keepdim=True).values + log_min_p] = float("-inf")
        out[rows] = sub
    return out
