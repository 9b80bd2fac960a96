"""The FP8 KV cache (`kv_cache_dtype="fp8_e4m3"`) on CPU: what the pool stores and what the model answers.

The pool keeps each token's K and V per head as e4m3 numbers with one float32 scale
(`kvcache/pool.py`); the torch backend reads them back dequantized. These tests bound the round
trip's error, check that nothing else in the pool is touched, and compare a small random model's
greedy answers and logits with the model's own dtype in the pages. The GPU side (the store inside
the RoPE kernel, our FP8 decode kernel) is in tests/test_gpu_kernels.py, the engine's FP8 graphs in
tests/test_gpu.py.
"""

from __future__ import annotations

import pytest
import torch

from minisgl_edu.kvcache.pool import FP8, FP8_MAX, KVPool, dequantize_fp8, quantize_fp8


def _error_bound(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Round-to-nearest e4m3: half a step of 3 mantissa bits (|x| / 16) for normal numbers, and for
    the subnormals below 2^-6 a fixed step of 2^-9 (half of it: 2^-10), both in units of the scale."""
    return x.abs() / 16 + scale[..., None] * 2.0**-10


def test_quantize_round_trip_error_is_bounded():
    g = torch.Generator().manual_seed(0)
    # Vectors of very different sizes, one with an outlier, one all zero, one of huge values.
    x = torch.randn(64, 4, 128, generator=g) * torch.logspace(-3, 3, 64)[:, None, None]
    x[5, 1, 7] = 500.0
    x[6, 2] = 0.0
    x[7, 3] = 1e6
    values, scale = quantize_fp8(x)
    assert values.dtype == FP8 and scale.dtype == torch.float32 and scale.shape == (64, 4)
    back = dequantize_fp8(values, scale, torch.float32)
    assert torch.isfinite(back).all()
    assert (back - x).abs().le(_error_bound(x, scale)).all()
    assert torch.equal(back[6, 2], torch.zeros(128))
    # Each vector's largest magnitude lands on 448, the top of e4m3: the whole range is used.
    assert torch.equal(values.float().abs().amax(-1)[x.abs().amax(-1) > 0], torch.full((64 * 4 - 1,), FP8_MAX))


@pytest.mark.parametrize(
    "dtype, device",
    [
        (torch.float32, "cpu"),
        (torch.bfloat16, "cpu"),
        pytest.param(
            torch.bfloat16,
            "cuda",
            marks=[pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")],
        ),
    ],
)
def test_pool_store_then_load_pages_round_trip(dtype, device):
    """Tokens written at scattered slots come back, through their pages, within the bound; slots
    never written keep zeros, and the dummy page too."""
    layers, num_pages, page, hkv, d = 2, 6, 4, 2, 64
    pool = KVPool(layers, num_pages, page, hkv, d, dtype, device, kv_dtype=FP8)
    assert pool.quantized and pool.k.dtype == FP8 and pool.k_scale.shape == (layers, (num_pages + 1) * page, hkv)
    g = torch.Generator().manual_seed(1)
    loc = torch.tensor([9, 2, 3, 17, 16, 0])
    k = (torch.randn(len(loc), hkv, d, generator=g) * 5).to(dtype)
    v = torch.randn(len(loc), hkv, d, generator=g).to(dtype)
    pool.store(1, loc.to(device), k.to(device), v.to(device))
    pool = _to_cpu(pool)
    pages = torch.tensor([[0, 4, 2]])  # slots 0-3, 16-19, 8-11
    k_out, v_out = pool.load_pages(1, pages)
    assert k_out.dtype == dtype and k_out.shape == (1, 3 * page, hkv, d)
    where = {int(s): i for i, s in enumerate(loc)}
    slots = [p * page + o for p in pages[0].tolist() for o in range(page)]
    for row, slot in enumerate(slots):
        for got, x, scales in ((k_out, k, pool.k_scale), (v_out, v, pool.v_scale)):
            if slot in where:
                want = x[where[slot]].float()
                bound = _error_bound(want, scales[1, slot]) + want.abs() / 128  # + one bf16 rounding
                assert (got[0, row].float() - want).abs().le(bound).all(), slot
            else:
                assert not got[0, row].any(), slot
    assert not pool.k[0].float().any() and not pool.v[0].float().any()  # the other layer is untouched


def _to_cpu(pool: KVPool) -> KVPool:
    """The pool with its buffers moved to the CPU (to read them back, whatever wrote them)."""
    for name in ("k", "v", "k_scale", "v_scale"):
        setattr(pool, name, getattr(pool, name).cpu())
    return pool


def test_fp8_pool_holds_about_twice_the_tokens():
    """Qwen3-0.6B's shape: 114,688 bytes per token in bfloat16, 1.94x fewer in FP8 with scales."""
    bf16 = KVPool.bytes_per_token(28, 8, 128, torch.bfloat16)
    fp8 = KVPool.bytes_per_token(28, 8, 128, FP8)
    assert bf16 == 114_688 and fp8 == 2 * 28 * 8 * (128 + 4)
    assert 1.9 < bf16 / fp8 < 2
    pool = KVPool(28, 10, 16, 8, 128, torch.bfloat16, "cpu", kv_dtype=FP8)
    assert pool.nbytes == 11 * 16 * fp8  # the dummy page too
    assert "1.94x the tokens of bfloat16" in pool.describe()


def test_kv_cache_dtype_is_checked_and_reaches_the_engine(tiny_model_dir):
    from minisgl_edu.engine import Engine, EngineConfig
    from minisgl_edu.server.args import parse_args

    with pytest.raises(ValueError, match="kv_cache_dtype"):
        EngineConfig(kv_cache_dtype="fp8")
    args = parse_args(["--kv-cache-dtype", "fp8_e4m3"])
    assert args.scheduler_overrides()["kv_cache_dtype"] == "fp8_e4m3"
    assert "kv_cache_dtype" not in parse_args([]).scheduler_overrides()
    engine = Engine(EngineConfig(model=tiny_model_dir, device="cpu", num_pages=64, kv_cache_dtype="fp8_e4m3"))
    assert engine.pool.quantized and engine.pool.dtype == torch.float32
    assert "float8_e4m3fn" in engine.pool.describe()


def _greedy(model_dir: str, kv: str, ps: list[list[int]], n: int) -> list[list[int]]:
    from minisgl_edu.core import SamplingParams
    from minisgl_edu.models.testing import IdTokenizer
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    sched = Scheduler(
        SchedulerConfig(model=model_dir, device="cpu", num_pages=256, kv_cache_dtype=kv),
        QueueIO(),
        tokenizer=IdTokenizer(),
    )
    for i, p in enumerate(ps):
        sched.add_request(i, p, SamplingParams(max_tokens=n, ignore_eos=True))
    sched.run_until_idle()
    out: dict[int, list[int]] = {i: [] for i in range(len(ps))}
    for msg in sched.io.drain():
        if msg.next_token >= 0:
            out[msg.uid].append(msg.next_token)
    return [out[i] for i in range(len(ps))]


def test_tiny_model_greedy_tokens_and_logits_with_fp8_pages(tiny_model_dir):
    """A random 2-layer model through the scheduler (prefill, then decode over FP8 pages): the
    greedy answers equal those with float32 pages; its logits over a prompt, teacher-forced
    through FP8 pages, move by less than a tenth of their spread (a random model's logits are
    small and close together: 0.16 apart here, where the bundled model's are several units;
    docs/benchmarks.md has its figures), and they do move: the pages really are FP8."""
    import random

    from minisgl_edu.models import load_model
    from minisgl_edu.models.testing import PagedRunner

    rng = random.Random(0)
    ps = [[rng.randrange(3, 4000) for _ in range(rng.randint(20, 90))] for _ in range(4)]
    assert _greedy(tiny_model_dir, "fp8_e4m3", ps, 12) == _greedy(tiny_model_dir, "auto", ps, 12)

    model, cfg = load_model(tiny_model_dir, dtype=torch.float32, device="cpu")
    logits = {}
    for name, kv in (("auto", None), ("fp8", FP8)):
        runner = PagedRunner(model, cfg, kv_dtype=kv)
        row = runner.add_request()
        runner.step([(row, ps[0][:10])])  # the first 10 tokens' K/V go into the pages
        (logits[name],) = runner.step([(row, ps[0][10:])], all_logits=True)  # the rest read them back
    spread = logits["auto"].std()
    error = (logits["fp8"] - logits["auto"]).abs().max()
    assert 0 < error < 0.1 * spread
