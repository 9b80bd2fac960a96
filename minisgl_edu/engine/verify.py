"""Verify drafts: the model's own token at each position of a request's guesses (speculative decoding).

Where this sits on the request path: in `Engine.forward_batch`, in place of the sampler, for a
batch in which some requests carry drafts (`ScheduledReq.draft`, proposed by
`scheduler/ngram.py`). Such a request computed k+1 positions in one forward pass: its newest
token, then its k drafts. The logits at position j are the model's distribution for the token
after draft j-1 (after the newest token for j = 0), so one pass gives k+1 next-token
distributions, and from them `verify` gives the model's token at each position, the "targets":

- greedy: the argmax at each of the k+1 positions. The scheduler's verify step
  (`scheduler/verify_step.py`) then accepts draft j while it equals targets[j] (`accept_greedy`);
  at the first mismatch targets[j] is the request's next token (the model's own correction), and
  if every draft is accepted, targets[k] is a free extra token (the "bonus"). So a step gives
  between 1 and k+1 tokens, and exactly the tokens greedy decoding one by one would have given.
- sampling (temperature > 0): the rule of speculative sampling (Leviathan, Kalman and Matias,
  "Fast Inference from Transformers via Speculative Decoding", 2023, Algorithm 1; Chen et al.,
  "Accelerating Large Language Model Decoding with Speculative Sampling", 2023) for a draft that is
  one fixed token x, i.e. a draft distribution q with q(x) = 1: accept x with probability
  min(1, p(x) / q(x)) = p(x); on rejection draw from the residual max(0, p - q), normalised, which
  is p with x removed. Then each emitted token has exactly the distribution p that sampling without
  drafts would have used. p is the distribution after the logits chain, temperature, top-k, top-p.
  The rule needs the probabilities, so it runs here (`accept_sampled`); its tokens are the targets
  up to the first rejected draft (the residual's draw there, never equal to that draft), and the
  verify step's comparison keeps exactly them.

Requests with penalties or a grammar never carry drafts (the scheduler's rule): their logits at
position j would depend on drafts 0..j-1 as if already accepted. Logit bias is the same at every
position, so it is applied here as in the sampler.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Batch, Req
from minisgl_edu.engine.logprobs import take_logprobs
from minisgl_edu.engine.output import ForwardOutput
from minisgl_edu.engine.sampler import filter_logits
from minisgl_edu.host_copy import to_device


def accept_greedy(drafts: list[int], targets: list[int]) -> list[int]:
    """The tokens a verify step gives: the drafts the model agrees with, then its own next token.

    `targets[j]` is the model's token at position j (len(drafts) + 1 of them, or with sampling up
    to the first rejected draft).
    """
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    return drafts[:n] + [targets[n]]


def accept_sampled(drafts: list[int], probs: torch.Tensor, generator: torch.Generator | None) -> list[int]:
    """Speculative sampling for fixed drafts. `probs`: [len(drafts) + 1, vocab], the distribution
    at each position (after temperature, top-k and top-p)."""
    device = probs.device
    for j, x in enumerate(drafts):
        u = torch.rand((), generator=generator, device=device)
        if bool(u < probs[j, x]):
            continue  # accepted with probability p(x)
        residual = probs[j].clone()
        residual[x] = 0.0  # max(0, p - q) with q the point mass on x
        return drafts[:j] + [_draw(residual, generator)]
    return drafts + [_draw(probs[len(drafts)], generator)]


def _draw(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    return int(torch.multinomial(probs / probs.sum(), 1, generator=generator)[0])


def verify(process_fn, logits: torch.Tensor, reqs: list[Req], drafts: list[list[int]]) -> list[list[int]]:
    """The targets of each request: its len(drafts[i]) + 1 argmax tokens when greedy, speculative
    sampling's tokens otherwise (a request without drafts: its ordinary next token). `logits`: the
    rows of every request in order, len(drafts[i]) + 1 rows for reqs[i]; `process_fn`: the
    sampler's logits chain."""
    row_reqs = [req for req, d in zip(reqs, drafts) for _ in range(len(d) + 1)]
    logits = process_fn(logits, row_reqs)
    argmax = torch.argmax(logits, dim=-1).tolist()  # one read-back for every greedy row
    out: list[list[int]] = []
    start = 0
    for req, d in zip(reqs, drafts):
        rows = slice(start, start + len(d) + 1)
        start = rows.stop
        sp = req.sampling_params
        if sp.is_greedy:
            out.append(argmax[rows])
            continue
        probs = torch.stack([filter_logits(row, sp.temperature, sp.top_k, sp.top_p) for row in logits[rows]])
        if not bool(torch.isfinite(probs).all()):  # a tiny temperature overflowed: greedy, as the sampler
            out.append(argmax[rows])
            continue
        out.append(accept_sampled(d, probs, req.generator))
    return out


def verify_batch(process_fn, batch: Batch, logits: torch.Tensor) -> ForwardOutput:
    """The output step of a verify batch: the targets of every item that samples (`verify`), each
    with its logprobs where its request asked, taken from the logits of its own position. Which of
    the targets a request keeps is the scheduler's verify step (`scheduler/verify_step.py`)."""
    items = [it for it in batch.items if it.completes_prompt]
    reqs = [it.req for it in items]
    targets = verify(process_fn, logits, reqs, [it.draft for it in items])
    # The logits rows of each target: a request keeps its first targets, so their logprobs are
    # the first of these.
    first_row = 0
    rows, row_reqs = [], []
    for it, req, tokens in zip(items, reqs, targets):
        rows.extend(range(first_row, first_row + len(tokens)))
        row_reqs.extend([req] * len(tokens))
        first_row += len(it.draft) + 1
    flat = [t for tokens in targets for t in tokens]
    device = logits.device
    lp = take_logprobs(logits[to_device(rows, torch.int64, device)], to_device(flat, torch.int64, device), row_reqs)
    per_row = iter(lp.per_row(len(flat)) if lp is not None else [None] * len(flat))
    per_item = iter([(tokens, [next(per_row) for _ in tokens]) for tokens in targets])
    out = ForwardOutput([], [])
    for it in batch.items:
        tokens, lps = next(per_item) if it.completes_prompt else ([], [])
        out.tokens.append(tokens)
        out.logprobs.append(lps)
    return out
