"""Keeps the output counts for the frequency and presence penalties as running counts on the
request, as SGLang's penalizers do ("instead of counting again at every step"): the first call
counts req.output_ids, every later call adds one count for the newest token, output_ids[-1]. That
is right only if the function is called exactly once per request for every new token, which is
what this engine does (the speculator drafts nothing for a request with penalties). The contract's
counts are those of req.output_ids as they are: "f once for every occurrence" in the output so
far. Called twice on the same request (the same batch again, a notebook cell run twice), or on a
batch that lists one request on two rows, this answer penalises the newest token again each time:
for frequency_penalty 1 and output [3], the reference takes 1 off token 3 both times, this answer
1 and then 2."""

from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req

MUST_FAIL = {"frequency and presence: output tokens only"}
MUST_SAY = "came out different"
CAUGHT_BY = {"hand"}
HINT_SAYS = "keep no state on the request or between calls"


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
            counts = getattr(req, "_out_counts", None)
            if counts is None or counts.numel() != vocab:
                counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab)  # first time: count them
            else:
                counts[req.output_ids[-1]] += 1  # one new token since the last step
            req._out_counts = counts
            counts = counts.to(row.dtype)
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
