"""The sampler: from the logits of each request's last position to its next token.

Where this sits on the request path: the last step of `Engine.forward_batch`. Requests in one
batch may ask for different things (one greedy, one with temperature 0.7 and top-p 0.9), so the
parameters are applied per row. A request with a `seed` samples from its own generator, so its
tokens do not depend on which other requests shared its batches.
"""

from __future__ import annotations

import random

import torch

from minisgl_edu.core import Req, SamplingParams


def make_generator(params: SamplingParams, device: torch.device | str) -> torch.Generator | None:
    if params.is_greedy:
        return None
    seed = params.seed if params.seed is not None else random.getrandbits(63)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def filter_logits(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """Probabilities of one row after temperature, top-k and top-p (the nucleus)."""
    logits = logits.float() / temperature
    if 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        # Drop a token when the tokens ranked above it already reach top_p; the first always stays.
        drop = (torch.cumsum(sorted_p, dim=-1) - sorted_p) >= top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_p)
        probs = probs / probs.sum()
    return probs


class Sampler:
    def sample(self, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
        """logits: [N, vocab], one row per request. Returns N token ids (int64, on CPU)."""
        out = torch.argmax(logits, dim=-1)
        for i, req in enumerate(reqs):
            sp = req.sampling_params
            if sp.is_greedy:
                continue
            probs = filter_logits(logits[i], sp.temperature, sp.top_k, sp.top_p)
            # A tiny temperature can overflow to inf/NaN; keep serving with the greedy token
            # rather than letting multinomial raise and take the whole scheduler down.
            if not bool(torch.isfinite(probs).all()) or float(probs.sum()) <= 0:
                continue
            out[i] = torch.multinomial(probs, 1, generator=req.generator)[0]
        return out.cpu()

    def sample_device(self, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
        """Like `sample`, but the tokens stay where the logits are (no wait for the GPU).

        On CUDA, non-greedy rows use FlashInfer's fused top-k/top-p kernel (imported only there);
        a greedy batch is one argmax, and without FlashInfer (the torch backend on a GPU) the rows
        go through `sample`'s torch code. On CPU this is `sample` without the final copy.
        """
        if logits.device.type == "cuda":
            if all(r.sampling_params.is_greedy for r in reqs):
                return torch.argmax(logits, dim=-1)
            try:
                from minisgl_edu.engine.flashinfer_sampler import sample_flashinfer

                return sample_flashinfer(logits, reqs)
            except ImportError:
                return self.sample(logits, reqs).to(logits.device)
        return self.sample(logits, reqs)
