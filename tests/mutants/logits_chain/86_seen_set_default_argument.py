"""Gathers the repetition penalty's tokens with a helper `seen_tokens(req, seen=set())`. A default argument is
built once, when the def runs, so every call shares one set that keeps the tokens of every earlier row and call:
each row is penalised for tokens only other requests saw (and a token id from the engine's large vocabulary
later indexes past a small row). Build a new set on every call: seen=None, then seen = set()."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"repetition penalty: prompt and output tokens"}
MUST_SAY = "is in neither this row's prompt nor its output"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the repetition penalty's set of seen tokens carries over"


def seen_tokens(req: Req, seen: set = set()) -> set:
    """Every distinct token of the request's prompt and output (added to `seen`, if given)."""
    seen.update(req.input_ids)
    seen.update(req.output_ids)
    return seen


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        return penalties or bool(sp.logit_bias) or req.grammar is not None

    if not any(uses_chain(r) for r in reqs):
        return logits
    out = logits.float().clone()
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(seen_tokens(req)), dtype=torch.long)
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
    return out
