"""Logprobs: how likely the model found each sampled token, and which tokens it found most likely.

Where this sits on the request path: in `Engine.forward_batch`, right after the sampler picked the
tokens, for only the requests that asked (`SamplingParams.logprobs`); a batch where nobody asked
does no work here. The values travel with the token in `DetokenizeMsg`, the detokenizer adds the
tokens' text, and the API server puts them in OpenAI's `logprobs` fields.

Which distribution: the model's own, `log_softmax` of the logits as the model gave them, before
penalties, logit bias, a grammar's mask, temperature, top-k and top-p (vLLM's default, "raw
logprobs"). So a token forced by a grammar can have a low logprob: that is the point of showing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.host_copy import to_device


@dataclass
class TokenLogprobs:
    """One sampled token's logprob and the `top_logprobs` most likely tokens at its position."""

    logprob: float
    top: list[tuple[int, float]]  # (token id, logprob), most likely first


@dataclass
class BatchLogprobs:
    """The logprobs of the rows that asked, still as tensors (on the GPU they are read only once
    the batch's tokens are, so taking them adds no wait)."""

    rows: list[int]  # which sampled rows asked
    chosen: torch.Tensor  # [len(rows)] the sampled token's logprob
    top_values: torch.Tensor  # [len(rows), k] with k the largest top_logprobs asked for
    top_ids: torch.Tensor
    ks: list[int]  # each row's own top_logprobs (<= k)

    def per_row(self, num_rows: int) -> list[Optional[TokenLogprobs]]:
        out: list[Optional[TokenLogprobs]] = [None] * num_rows
        chosen = self.chosen.tolist()
        values, ids = self.top_values.tolist(), self.top_ids.tolist()
        for j, (row, k) in enumerate(zip(self.rows, self.ks)):
            out[row] = TokenLogprobs(chosen[j], list(zip(ids[j][:k], values[j][:k])))
        return out


def take_logprobs(logits: torch.Tensor, tokens: torch.Tensor, reqs: list[Req]) -> Optional[BatchLogprobs]:
    """logits: [N, vocab] as the model gave them; tokens: the N sampled ids. None if nobody asked."""
    rows = [i for i, r in enumerate(reqs) if r.sampling_params.logprobs]
    if not rows:
        return None
    index = to_device(rows, torch.int64, logits.device)
    logp = torch.log_softmax(logits.index_select(0, index).float(), dim=-1)
    chosen = logp.gather(1, tokens.index_select(0, index)[:, None].to(torch.int64))[:, 0]
    ks = [reqs[i].sampling_params.top_logprobs for i in rows]
    top_values, top_ids = torch.topk(logp, max(ks), dim=-1)
    return BatchLogprobs(rows, chosen, top_values, top_ids, ks)
