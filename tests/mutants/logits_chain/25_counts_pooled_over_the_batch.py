"""Counts the output tokens for the frequency and presence penalties once for the whole batch (one
bincount over every request's output_ids) and applies those counts to each row that asks for a
penalty, with the row's own f and r: a vectorisation that pools the rows' histories. The contract:
"every row uses only its own request's values", and the counts are of that request's output. A row
is then penalised for tokens that another request generated. Differs e.g. with two rows, A with
frequency_penalty=1 and output [3], B with no penalty and output [5]: the reference takes 1 off
A's token 3 only, this answer off A's tokens 3 and 5."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"frequency and presence: output tokens only", "only the rows that ask, each with its own values"}
MUST_SAY = "output tokens of every row of the batch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not the outputs of the other rows of the batch"


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
    # the output counts of the batch, once for every row (one bincount instead of one per row)
    generated = [t for r in reqs for t in r.output_ids]
    batch_counts = torch.bincount(torch.tensor(generated, dtype=torch.long), minlength=vocab)
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]  # `row` is a view: changing it changes `out`
        # 1. repetition: once for every token seen in the prompt or the output
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        # 2. frequency and presence: counts in the output only
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = batch_counts.to(row.dtype)
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
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
