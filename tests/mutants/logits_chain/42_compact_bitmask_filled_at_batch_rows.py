"""Allocates the grammar bitmask with one row per request that has a grammar, fills request i's mask
at its row of the batch (fill_mask(bitmask, i)), and applies the bitmask to the whole batch without
indices. The bitmask must have the batch's rows: apply_token_bitmask_inplace masks logits row i
with bitmask row i and wants as many bitmask rows as logits rows, and fill_mask(bitmask, i) needs a
row i. A batch of grammar rows only works by chance; as soon as a row without a grammar is in the
batch, xgrammar raises (an index out of bounds, or batch sizes that differ)."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"the input tensor is not changed", "grammar mask, greedy rows too", "a batch that uses every link"}
MUST_SAY = "on these rows alone and on the other rows alone"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the grammar bitmask's rows did not line up with the batch's rows"


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
        # 4. the grammar's mask: below, for the whole batch at once
    grammar_rows = [i for i, r in enumerate(reqs) if r.grammar is not None]
    if grammar_rows:
        bitmask = xgrammar.allocate_token_bitmask(len(grammar_rows), vocab)
        for i in grammar_rows:
            reqs[i].grammar.fill_mask(bitmask, i)
        xgrammar.apply_token_bitmask_inplace(out, bitmask)
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]
        # 5. (stretch, not in the engine) min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
