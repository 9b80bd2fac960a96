"""The sampler: from the logits of each request's last position to its next token.

Where this sits on the request path: the last step of `Engine.forward_batch`. Requests in one
batch may ask for different things (one greedy, one with temperature 0.7 and top-p 0.9), so the
parameters are applied per row. A request with a `seed` samples from its own generator, so its
tokens do not depend on which other requests shared its batches.

Before a token is picked, the logits go through the logits chain (`logits_chain.py`: penalties,
logit bias, a grammar's mask); the engine takes logprobs from the logits as the model gave them
(`logprobs.py`), so the chain never changes them in place.
"""

from __future__ import annotations

import random

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.logits_chain import process_logits


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
    def __init__(self) -> None:
        # The logits chain. Exercise 7 of the course replaces it (`engine.sampler.process_fn`).
        self.process_fn = process_logits

    def sample(self, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
        """logits: [N, vocab], one row per request. Returns N token ids (int64) where the logits are.

        The logits chain first; then an argmax for greedy rows and a draw for the others. On CUDA
        the draws use FlashInfer's fused top-k/top-p kernel when it is there (imported only then),
        and nothing here waits for the GPU, so overlap scheduling can prepare the next batch.
        """
        logits = self.process_fn(logits, reqs)
        if all(r.sampling_params.is_greedy for r in reqs):
            return torch.argmax(logits, dim=-1)
        if logits.device.type == "cuda":
            try:
                from minisgl_edu.engine.flashinfer_sampler import sample_flashinfer

                return sample_flashinfer(logits, reqs)
            except ImportError:
                pass  # the torch backend on a GPU, without FlashInfer: the rows below
        return self._sample_rows(logits, reqs)

    def _sample_rows(self, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
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
        return out
