"""Sampling on the GPU with FlashInfer's fused kernels (temperature, top-k, top-p).

Where this sits on the request path: the last step of `Engine.forward_batch` on CUDA, in place of
the per-row loop of `sampler.py`. Greedy rows are an argmax (no kernel needed); the other rows are
divided by their temperature and go through `top_k_top_p_sampling_from_logits`, which masks the
top-k, applies softmax and samples from the top-p nucleus by rejection sampling, without sorting
the 150k-entry vocabulary. Every row has its own top_k, top_p and random seed.

Seeds: each request draws from a Philox stream keyed by (its seed, how many tokens it has
sampled), so a request with `seed` set gets the same tokens on every run of the same batches.
The tokens are not the CPU sampler's tokens: the random streams differ.

Everything stays on the GPU and nothing reads back to the host here, so overlap scheduling can
prepare the next batch while this one runs.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.host_copy import to_device

_MASK63 = (1 << 63) - 1


def _seed_of(req: Req) -> int:
    gen = req.generator
    base = gen.initial_seed() if gen is not None else 0
    # A different stream for each of the request's tokens (and one per request).
    return (base * 1_000_003 + len(req.output_ids) * 7_919 + 1) & _MASK63


def sample_flashinfer(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab] float32 on CUDA -> N token ids (int64, on the GPU)."""
    import flashinfer.sampling

    out = torch.argmax(logits, dim=-1)
    rows = [i for i, r in enumerate(reqs) if not r.sampling_params.is_greedy]
    if not rows:
        return out
    dev = logits.device
    vocab = logits.shape[-1]
    sps = [reqs[i].sampling_params for i in rows]

    idx = to_device(rows, torch.int64, dev)
    temperature = to_device([sp.temperature for sp in sps], torch.float32, dev)
    top_k = to_device([sp.top_k if 0 < sp.top_k < vocab else vocab for sp in sps], torch.int32, dev)
    top_p = to_device([sp.top_p for sp in sps], torch.float32, dev)
    seed = to_device([_seed_of(reqs[i]) for i in rows], torch.int64, dev)
    offset = torch.zeros(len(rows), dtype=torch.int64, device=dev)
    scaled = logits.index_select(0, idx).float() / temperature[:, None]
    tokens = flashinfer.sampling.top_k_top_p_sampling_from_logits(
        scaled, top_k, top_p, deterministic=True, seed=seed, offset=offset
    )
    out.index_copy_(0, idx, tokens.to(out.dtype))
    return out
