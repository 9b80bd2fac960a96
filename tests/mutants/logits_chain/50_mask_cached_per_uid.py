"""Works out each request's grammar mask once, on the first call that sees its uid, and reuses it on every
later call. The grammar moves on after every accepted token, so from the second step on the row is masked
with the tokens allowed at an earlier position: the chain must be computed from the request as it is now."""

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"grammar mask, greedy rows too"}
MUST_SAY = "state kept between calls"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "state kept between calls"

_MASKS: dict[int, torch.Tensor] = {}


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
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        if req.grammar is not None:
            if req.uid not in _MASKS:
                bitmask = xgrammar.allocate_token_bitmask(1, vocab)
                req.grammar.fill_mask(bitmask, 0)
                bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
                _MASKS[req.uid] = ~bits.flatten()[:vocab].bool()
            row[_MASKS[req.uid]] = float("-inf")
    return out
