"""Stretch: vectorises min_p over the rows that use it and takes the top probability with
probs.max() over the whole sub-batch instead of per row (probs.max(dim=-1, keepdim=True)). Every
min_p row is then filtered against the most confident row's top probability, so a flatter row loses
tokens it should keep (or all of them). The threshold is min_p times the row's own top probability."""

from __future__ import annotations

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {
    "stretch: min_p at the row's temperature",
    "stretch: min_p after the other links",
    "stretch: a token exactly at the threshold stays",
}
MUST_SAY = "the top probability of the whole batch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "this row's top probability, not the batch's"


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits  # nothing to do, and no copy to pay for
    out = logits.float().clone()  # never change `logits`: the logprobs are taken from it
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]  # `row` is a view: changing it changes `out`
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
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        # 5. (stretch, not in the engine) min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
    rows = [
        i
        for i, r in enumerate(reqs)
        if getattr(r.sampling_params, "min_p", 0.0) > 0 and not r.sampling_params.is_greedy
    ]
    if rows:
        temps = torch.tensor([reqs[i].sampling_params.temperature for i in rows])[:, None]
        min_ps = torch.tensor([reqs[i].sampling_params.min_p for i in rows])[:, None]
        probs = torch.softmax(out[rows] / temps, dim=-1)
        sub = out[rows]
        sub[probs < min_ps * probs.max()] = float("-inf")
        out[rows] = sub
    return out
