"""CPU micro-benchmarks behind two choices of the CPU path, printed as a table.

    python -m minisgl_edu.bench.cpu_ops

1. Matmul weight layout (`models/loader.py`, `store_weights_input_major`): the 120 layer matmuls
   of one SmolLM2-135M decode step (30 layers x qkv, o, gate_up, down) and the tied logits
   matmul, with the weights stored [out, in] (the checkpoint's layout) or [in, out].
2. Decode attention (`attention/torch_backend.py`): SDPA over already-gathered K/V with
   `enable_gqa` (each query head its own row) or with the G query heads of a KV head as G rows.
3. Headroom not taken: the same 120 float32 matmuls through MKL's packed-weight sgemm
   (`torch.ops.mkl._mkl_linear`, a private op that torch.compile's CPU freezing uses), against
   the [in, out] layout the engine uses (see docs/benchmarks.md, "CPU").

Each figure is the mean of several calls after a warm-up; run it on an idle machine, and more
than once where the machine is shared.
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

# SmolLM2-135M: hidden 576, 9 query heads and 3 KV heads of 64, MLP 1536, vocabulary 49,152.
LAYER_SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536)]  # (out, in): qkv, o, gate_up, down
LAYERS, VOCAB, HIDDEN = 30, 49152, 576


def mean_ms(fn, n: int = 20) -> float:
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e3


def matmul_rows(dtype: torch.dtype) -> list[str]:
    rows = []
    for batch in (1, 8, 16):
        out_in = [[torch.randn(o, i, dtype=dtype) for _ in range(LAYERS)] for o, i in LAYER_SHAPES]
        in_out = [[w.t().contiguous().t() for w in ws] for ws in out_in]  # same values and shape
        xs = [torch.randn(batch, i, dtype=dtype) for _, i in LAYER_SHAPES]
        emb = torch.randn(VOCAB, HIDDEN, dtype=dtype)
        emb_t = emb.t().contiguous().t()
        h = torch.randn(batch, HIDDEN, dtype=dtype)
        a = mean_ms(lambda: [F.linear(x, w) for x, ws in zip(xs, out_in) for w in ws])
        b = mean_ms(lambda: [F.linear(x, w) for x, ws in zip(xs, in_out) for w in ws])
        c, d = mean_ms(lambda: F.linear(h, emb)), mean_ms(lambda: F.linear(h, emb_t))
        rows.append(f"| {str(dtype)[6:]} | {batch} | {a:.1f} | {b:.1f} | {c:.1f} | {d:.1f} |")
    return rows


def attention_rows(dtype: torch.dtype) -> list[str]:
    rows = []
    hkv, g, d = 3, 3, 64
    for batch, keys in ((1, 400), (8, 400), (16, 160), (16, 400)):
        k = torch.randn(batch, keys, hkv, d, dtype=dtype).transpose(1, 2)
        v = torch.randn(batch, keys, hkv, d, dtype=dtype).transpose(1, 2)
        q = torch.randn(batch, hkv * g, d, dtype=dtype)
        lens = torch.randint(keys // 2, keys + 1, (batch,))
        mask = (torch.arange(keys)[None, :] < lens[:, None])[:, None, None, :]
        per_head = lambda: F.scaled_dot_product_attention(q[:, :, None, :], k, v, attn_mask=mask, enable_gqa=True)  # noqa: E731
        grouped = lambda: F.scaled_dot_product_attention(q.view(batch, hkv, g, d), k, v, attn_mask=mask)  # noqa: E731
        err = (per_head().reshape(batch, -1, d) - grouped().reshape(batch, -1, d)).abs().max().item()
        rows.append(
            f"| {str(dtype)[6:]} | {batch} x {keys} | {1e3 * mean_ms(per_head, 50):.0f} | "
            f"{1e3 * mean_ms(grouped, 50):.0f} | {err:.1e} |"
        )
    return rows


def packed_rows() -> list[str]:
    if not hasattr(torch.ops.mkl, "_mkl_linear"):
        return ["| (this torch build has no MKL packed sgemm) | | | |"]
    rows = []
    for batch in (1, 8, 16, 32):
        out_in = [[torch.randn(o, i) for _ in range(LAYERS)] for o, i in LAYER_SHAPES]
        in_out = [[w.t().contiguous().t() for w in ws] for ws in out_in]
        packed = [[(torch.ops.mkl._mkl_reorder_linear_weight(w, batch), w) for w in ws] for ws in out_in]
        xs = [torch.randn(batch, i) for _, i in LAYER_SHAPES]
        a = mean_ms(lambda: [F.linear(x, w) for x, ws in zip(xs, in_out) for w in ws])
        b = mean_ms(
            lambda: [torch.ops.mkl._mkl_linear(x, p, w, None, batch) for x, ps in zip(xs, packed) for p, w in ps]
        )
        x, (p, w) = xs[0], packed[0][0]
        err = (torch.ops.mkl._mkl_linear(x, p, w, None, batch) - F.linear(x, w)).abs().max().item()
        rows.append(f"| {batch} | {a:.1f} | {b:.1f} | {err:.1e} |")
    return rows


def main() -> None:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(
        "\n| dtype | batch | 120 layer matmuls, W [out, in] ms | W [in, out] ms | logits, [out, in] ms | [in, out] ms |"
    )
    print("|---|---|---|---|---|---|")
    for dt in (torch.float32, torch.bfloat16):
        print("\n".join(matmul_rows(dt)))
    print("\n| dtype | batch x keys | decode SDPA, enable_gqa µs | grouped per KV head µs | max diff |")
    print("|---|---|---|---|---|")
    for dt in (torch.float32, torch.bfloat16):
        print("\n".join(attention_rows(dt)))
    print("\n| batch | 120 layer matmuls float32, W [in, out] ms | MKL packed ms | max diff |")
    print("|---|---|---|---|")
    print("\n".join(packed_rows()))


if __name__ == "__main__":
    main()
