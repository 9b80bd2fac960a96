"""The no-copy shortcut asks only the first request whether it needs the chain: when reqs[0] has no
penalty, no bias and no grammar, the whole batch comes back as the model gave it, and every later row
loses its links too. The shortcut may return the logits untouched only when no request of the batch
needs a link; a batch whose first row asks for nothing and whose second has penalties shows it."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"only the rows that ask, each with its own values"}
MUST_SAY = "decides on reqs[0] alone"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test every request (any(... for req in reqs)), not reqs[0]"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        return penalties or bool(sp.logit_bias) or req.grammar is not None

    if not reqs or not uses_chain(reqs[0]):
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
    return out
