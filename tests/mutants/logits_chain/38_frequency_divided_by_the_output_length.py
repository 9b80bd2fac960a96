"""Subtracts frequency_penalty times the token's share of the output, count / len(req.output_ids),
instead of times its count: a relative frequency, which shrinks as the output grows. The frequency
penalty grows with the raw count: a token generated three times loses 3 * frequency_penalty, however
long the output is (with a one-token output both agree, so only longer outputs show it)."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {
    "frequency and presence: output tokens only",
    "repetition first, then frequency and presence",
    "logit_bias after the penalties",
    "only the rows that ask, each with its own values",
    "a batch that uses every link",
    "penalties in the real engine (tokens and logprobs)",
}
MUST_SAY = "count / len(req.output_ids), not by its count"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "raw count in req.output_ids, not count / len(req.output_ids)"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
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
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            share = counts / len(req.output_ids)
            row -= sp.frequency_penalty * share + sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
    return out
