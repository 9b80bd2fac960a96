"""What the GPU tests share: their marks, the tiny model's attention shape, a scheduler to drive and
the checks they make on it.

A plain module, not a test file (pytest collects nothing here): tests/test_gpu.py,
tests/test_gpu_kernels.py and tests/test_gpu_sampling.py import it. `gpu` marks a test for the GPU
machine (`pytest -m gpu`), `needs_cuda` skips it elsewhere. The scheduler helpers run the engine in
this process with `IdTokenizer` (token ids in, token ids out), so a test compares token lists.
"""

from __future__ import annotations

import random

import pytest
import torch

from minisgl_edu.core import SamplingParams
from minisgl_edu.models.testing import IdTokenizer

HAS_CUDA = torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")

HQ, HKV, D = 16, 8, 128  # the attention shape of `tiny_qwen3_dir` (conftest.py): Qwen3-0.6B's


def make_scheduler(model_dir: str, device: str, **kw):
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    cfg = dict(
        model=model_dir, device=device, num_pages=2048, page_size=16, max_running_requests=16, cuda_graph_max_bs=16
    )
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg), QueueIO(), tokenizer=IdTokenizer())


def prompts(n: int, lo: int, hi: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 500) for _ in range(rng.randint(lo, hi))] for _ in range(n)]


def generate(sched, ps, max_tokens, overlap: bool, **sp) -> list[list[int]]:
    base = 1000 * (sched.batch_count + 1)
    for i, p in enumerate(ps):
        sched.add_request(base + i, p, SamplingParams(max_tokens=max_tokens, ignore_eos=True, **sp))
    sched.run_until_idle(overlap=overlap)
    out: dict[int, list[int]] = {base + i: [] for i in range(len(ps))}
    for msg in sched.io.drain():
        if msg.next_token >= 0:
            out[msg.uid].append(msg.next_token)
    assert not sched.reqs and not sched.has_in_flight
    return [out[base + i] for i in range(len(ps))]


def assert_all_pages_back(sched) -> None:
    sched.cache.check()
    assert sched.cache.page_table.num_free_rows == sched.cache.page_table.max_reqs
    assert sched.cache.num_available == sched.cache.num_pages
    assert sched.cache.num_deferred == 0 and not sched.cache._pins and not sched._ahead


def rel_err(got: torch.Tensor, want: torch.Tensor) -> float:
    """The relative error of `got` against `want`, over the whole tensor (in float32)."""
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def paged_logits(model, cfg, ps: list[list[int]], backend: str = "torch") -> torch.Tensor:
    """Every prompt position's logits of one prefill of `ps`, then 4 decode steps (fixed tokens),
    on the attention backend called `backend` (`attention.create_backend`)."""
    from minisgl_edu.attention import create_backend
    from minisgl_edu.models.testing import PagedRunner

    runner = PagedRunner(model, cfg, page_size=16, max_tokens=1024, max_reqs=4, max_len=256)
    if backend != "torch":
        runner.backend = create_backend(backend, runner.pool, runner.page_table, num_qo_heads=cfg.num_heads)
    rows = [runner.add_request() for _ in ps]
    out = runner.step(list(zip(rows, ps)), all_logits=True)
    for step in range(4):
        out += runner.step([(r, [7 + step]) for r in rows])
    return torch.cat([o.reshape(-1, o.shape[-1]) for o in out]).float()
