"""JIT-compile one family of FlashInfer kernels on a fresh GPU machine:
prefill | decode | sampling (attention, sampler) or norm | rope | act (the fused model layers;
these also check the kernel against a float32 torch reference and print the relative error).

FlashInfer builds each kernel module the first time it is used (~10-90 s each) and caches it;
running the three families in parallel processes overlaps their compilations.
    python scripts/maintainer/gpu_warmup.py prefill & python scripts/maintainer/gpu_warmup.py decode & ...; wait
"""

import sys
import time

import torch

what = sys.argv[1]
t0 = time.perf_counter()
dev, dt = "cuda", torch.bfloat16


def rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def ref_rms(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w.float()


errs: dict[str, float] = {}
if what == "norm":
    import flashinfer.norm as fn

    w = 1 + 0.2 * torch.randn(1024, device=dev, dtype=dt)
    x = torch.randn(37, 1024, device=dev, dtype=dt)
    errs["rmsnorm [T, 1024]"] = rel(fn.rmsnorm(x, w, 1e-6), ref_rms(x, w))
    # Qwen3's q/k norm: a strided [T, heads, 128] view of the qkv matmul's output.
    qkv = torch.randn(37, 4096, device=dev, dtype=dt)
    q = qkv[:, :2048].view(37, 16, 128)
    wh = 1 + 0.2 * torch.randn(128, device=dev, dtype=dt)
    out = torch.empty(q.shape, dtype=dt, device=dev)
    errs["rmsnorm [T, 16, 128] strided"] = rel(fn.rmsnorm(q, wh, 1e-6, out=out), ref_rms(q, wh))
    r = torch.randn(37, 1024, device=dev, dtype=dt)
    want_r = x.float() + r.float()
    want_x = ref_rms(want_r, w)
    fn.fused_add_rmsnorm(x, r, w, 1e-6)
    errs["fused_add_rmsnorm: residual"] = rel(r, want_r)
    errs["fused_add_rmsnorm: out"] = rel(x, want_x)
elif what == "rope":
    import flashinfer.rope as fr

    from minisgl_edu.models.rope import RotaryEmbedding, apply_rotary

    rot = RotaryEmbedding(128, 40960, 1e6).to(dev)
    rot.build_cache(dev)
    pos = torch.randint(0, 40960, (37,), device=dev)
    qkv = torch.randn(37, 4096, device=dev, dtype=dt)
    q = qkv[:, :2048].clone().view(37, 16, 128)  # contiguous (after q_norm)
    k = qkv[:, 2048:3072].view(37, 8, 128)  # strided view, rotated in place
    cos, sin = rot.lookup(pos, torch.float32)  # [T, 128] each, laid out for apply_rotary
    want_q, want_k = apply_rotary(q.float(), cos, sin), apply_rotary(k.float(), cos, sin)
    fr.apply_rope_with_cos_sin_cache_inplace(pos, q, k, 128, rot.cos_sin_table(), is_neox=True)
    errs["rope q"], errs["rope k (strided)"] = rel(q, want_q), rel(k, want_k)
elif what == "act":
    import flashinfer.activation as fa

    gu = torch.randn(37, 6144, device=dev, dtype=dt)
    g, u = gu.float().chunk(2, -1)
    errs["silu_and_mul"] = rel(fa.silu_and_mul(gu), torch.nn.functional.silu(g) * u)
elif what == "sampling":
    import flashinfer.sampling as fs

    logits = torch.randn(2, 1000, device=dev)
    fs.top_k_top_p_sampling_from_logits(
        logits,
        torch.tensor([5, 5], dtype=torch.int32, device=dev),
        torch.tensor([0.9, 0.9], device=dev),
        seed=torch.tensor([1, 2], device=dev),
        offset=torch.tensor([0, 0], device=dev),
    )
else:
    from minisgl_edu.attention.base import AttentionMetadata
    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    pool = KVPool(1, 8, 16, 8, 128, dt, dev)  # Qwen3-0.6B's attention shape
    table = PageTable(2, 4, dev, fill=pool.dummy_page)
    row = table.alloc_row()
    table.append(row, [0, 1])
    fi = FlashInferBackend(pool, table, num_qo_heads=16)
    q_len = 20 if what == "prefill" else 1
    meta = AttentionMetadata(
        what == "prefill", [q_len], [20], torch.tensor([row], device=dev), torch.arange(20 - q_len, 20, device=dev)
    )
    fi.prepare(meta)
    fi.forward(
        0,
        torch.randn(q_len, 16, 128, device=dev, dtype=dt),
        torch.randn(q_len, 8, 128, device=dev, dtype=dt),
        torch.randn(q_len, 8, 128, device=dev, dtype=dt),
    )
torch.cuda.synchronize()
for name, e in errs.items():
    print(f"  {name}: relative error vs float32 {e:.2e}" + ("" if e < 1e-2 else "  <-- TOO LARGE"))
print(f"warm-up {what}: {time.perf_counter() - t0:.1f} s")
