"""The logits chain: what happens to a batch's logits between the model and the sampler.

Where this sits on the request path: inside `Sampler.sample`, the last step of
`Engine.forward_batch`. The model gives one row of logits per request that samples a token; each
request may ask for different things, so each link of the chain works on the rows that use it:

    the model's logits ─┬─▶ logprobs are taken here: the model's own distribution (as vLLM's default)
                        ▼
      1. repetition penalty         prompt and output tokens        (SGLang / vLLM's definition)
      2. frequency, presence        output tokens                   (OpenAI's definitions)
      3. logit bias                 the request's token ids
      4. grammar mask               -inf for every token the grammar forbids; greedy rows too
                        ▼
      temperature, top-k, top-p, sample (or argmax)                 (sampler.py)

A batch whose requests use none of links 1-4 passes through untouched: no copy, no kernel.
Each link is vectorised over its rows, and the order is fixed here, once.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.host_copy import to_device


def needs_chain(req: Req) -> bool:
    """Does any link of the chain change this request's logits?"""
    sp = req.sampling_params
    return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None


def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler draws from (the
    same tensor when no request uses the chain, else a float32 copy with the links applied)."""
    if not any(needs_chain(r) for r in reqs):
        return logits
    logits = logits.float().clone()
    rows = [i for i, r in enumerate(reqs) if r.sampling_params.has_penalties]
    if rows:
        apply_penalties(logits, rows, [reqs[i] for i in rows])
    rows = [i for i, r in enumerate(reqs) if r.sampling_params.logit_bias]
    if rows:
        apply_logit_bias(logits, rows, [reqs[i] for i in rows])
    rows = [i for i, r in enumerate(reqs) if r.grammar is not None]
    if rows:
        from minisgl_edu.engine.grammar import grammar_mask

        grammar_mask(logits, rows, [reqs[i].grammar for i in rows])
    return logits


def token_counts(logits: torch.Tensor, id_lists: list[list[int]]) -> torch.Tensor:
    """[len(id_lists), vocab]: how often each token occurs in each list."""
    counts = torch.zeros(len(id_lists), logits.shape[-1], dtype=logits.dtype, device=logits.device)
    row_of = [i for i, ids in enumerate(id_lists) for _ in ids]
    if row_of:
        ids = [t for ids in id_lists for t in ids]
        index = (to_device(row_of, torch.int64, logits.device), to_device(ids, torch.int64, logits.device))
        counts.index_put_(index, torch.ones(len(ids), dtype=logits.dtype, device=logits.device), accumulate=True)
    return counts


def apply_penalties(logits: torch.Tensor, rows: list[int], reqs: list[Req]) -> None:
    """Links 1 and 2, in place on `rows` of `logits`.

    repetition_penalty p (SGLang, vLLM; from the CTRL paper): every token seen in the prompt or the
    output so far has its logit divided by p when positive and multiplied by p when negative, so
    p > 1 always makes it less likely. frequency_penalty f and presence_penalty r (OpenAI): a
    token that occurs c > 0 times in the output so far loses c * f + r.
    """
    device = logits.device
    sub = logits[rows]
    output = token_counts(logits, [r.output_ids for r in reqs])
    rep = to_device([r.sampling_params.repetition_penalty for r in reqs], sub.dtype, device)[:, None]
    if any(r.sampling_params.repetition_penalty != 1.0 for r in reqs):  # (no read-back from the GPU)
        seen = (output + token_counts(logits, [r.input_ids for r in reqs])) > 0
        sub = torch.where(seen, torch.where(sub > 0, sub / rep, sub * rep), sub)
    freq = to_device([r.sampling_params.frequency_penalty for r in reqs], sub.dtype, device)[:, None]
    presence = to_device([r.sampling_params.presence_penalty for r in reqs], sub.dtype, device)[:, None]
    sub = sub - freq * output - presence * (output > 0).to(sub.dtype)
    logits[rows] = sub


def apply_logit_bias(logits: torch.Tensor, rows: list[int], reqs: list[Req]) -> None:
    """Link 3, in place: add each request's bias to its token ids (ids past the vocabulary were
    refused when the request arrived)."""
    row_of = [row for row, r in zip(rows, reqs) for _ in r.sampling_params.logit_bias]
    ids = [t for r in reqs for t in r.sampling_params.logit_bias]
    bias = [b for r in reqs for b in r.sampling_params.logit_bias.values()]
    device = logits.device
    index = (to_device(row_of, torch.int64, device), to_device(ids, torch.int64, device))
    logits.index_put_(index, to_device(bias, logits.dtype, device), accumulate=True)
