"""Our Triton kernels against what they replace, and FlashInfer's two decode kernels (CUDA only).

    python scripts/maintainer/gpu_kernel_bench.py [gemm] [rope] [attn] [small_attn]

Every figure is GPU time per call inside a CUDA graph (launches back to back, as in the decode
graph), with *cold* caches as in a real step: each call reads another copy of the weights (or
another layer's KV), enough copies to overflow the H200's 50 MB L2. Shapes: Qwen3-0.6B's four
layer matmuls, its attention heads (16 q, 8 kv, head_dim 128), 28 layers.
"""

import sys

import torch
import torch.nn.functional as F

from minisgl_edu.bench.graph_timer import graph_us

dev = "cuda"
parts = set(sys.argv[1:]) or {"gemm", "rope", "attn", "small_attn"}


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def fi_graph_decode(bs, pages, tensor_cores, indptr, indices, hq, hkv, d, page):
    """FlashInfer's decode wrapper in CUDA-graph mode, planned for `bs` requests of full pages."""
    import flashinfer

    w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
        torch.zeros(128 * 1024 * 1024, dtype=torch.uint8, device=dev),
        "NHD",
        use_cuda_graph=True,
        use_tensor_cores=tensor_cores,
        paged_kv_indptr_buffer=torch.zeros(bs + 1, dtype=torch.int32, device=dev),
        paged_kv_indices_buffer=torch.zeros(pages, dtype=torch.int32, device=dev),
        paged_kv_last_page_len_buffer=torch.zeros(bs, dtype=torch.int32, device=dev),
    )
    w.plan(
        indptr,
        indices,
        torch.full((bs,), page, dtype=torch.int32),
        hq,
        hkv,
        d,
        page,
        q_data_type=torch.bfloat16,
        kv_data_type=torch.bfloat16,
    )
    return w


if "gemm" in parts:
    from minisgl_edu.kernels.skinny_gemm import skinny_linear

    print(
        "| matmul (N x K) | M | cuBLAS us | skinny us, pick_config | skinny us, best | best (BLOCK_N, BLOCK_K, warps, stages) | TB/s best |"
    )
    print("|---|---|---|---|---|---|---|")
    configs = [(bn, bk, 4, st) for bn in (16, 32) for bk in (128, 256, 512) for st in (3, 4)]
    configs += [(64, 128, 8, 3), (32, 256, 8, 3), (16, 256, 2, 4)]
    for name, n, k in [("qkv", 4096, 1024), ("o", 1024, 2048), ("gate_up", 6144, 1024), ("down", 1024, 3072)]:
        copies = max(4, int(300e6 // (n * k * 2)))
        ws = [torch.randn(n, k, device=dev, dtype=torch.bfloat16) / k**0.5 for _ in range(copies)]
        ranked = None
        for m in (1, 4, 16):
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            base = graph_us([lambda w=w: F.linear(x, w) for w in ws])
            want = F.linear(x.float(), ws[0].float())
            default = graph_us([lambda w=w: skinny_linear(x, w) for w in ws])
            cands = configs if ranked is None else ranked[:4]
            res = []
            for bn, bk, nw, st in cands:
                if k % bk:
                    continue
                try:
                    t = graph_us([lambda w=w: skinny_linear(x, w, config=(bn, bk, nw, st)) for w in ws], replays=3)
                except Exception:  # a config the compiler refuses
                    continue
                res.append((t, (bn, bk, nw, st)))
            res.sort()
            if ranked is None:
                ranked = [c for _, c in res]
            t, c = res[0]
            err = rel(skinny_linear(x, ws[0], config=c), want)
            print(
                f"| {name} ({n} x {k}) | {m} | {base:.2f} | {default:.2f} | {t:.2f} | {c} | {n * k * 2 / t / 1e6:.2f} "
                f"| err {err:.1e}"
            )
        del ws

if "rope" in parts:
    import flashinfer.norm
    import flashinfer.rope

    from minisgl_edu.kernels.qk_rope_store import qk_rope_store
    from minisgl_edu.models.rope import RotaryEmbedding

    print()
    print("| q/k norm + RoPE + K/V store | 5 kernels us | 1 Triton kernel us |")
    print("|---|---|---|")
    HQ, HKV, D = 16, 8, 128
    rot = RotaryEmbedding(D, 40960, 1e6).to(dev)
    rot.build_cache(dev)
    cs = rot.cos_sin_table()
    pool_k = torch.zeros(70000 * 16, HKV, D, device=dev, dtype=torch.bfloat16)
    pool_v = torch.zeros_like(pool_k)
    qw, kw = torch.ones(D, device=dev, dtype=torch.bfloat16), torch.ones(D, device=dev, dtype=torch.bfloat16)
    for T in (1, 16, 256):
        qkv = torch.randn(T, (HQ + 2 * HKV) * D, device=dev, dtype=torch.bfloat16)
        pos = torch.randint(0, 4000, (T,), device=dev)
        loc = torch.randperm(70000 * 16, device=dev)[:T]

        def old():
            q, k, v = qkv.split([HQ * D, HKV * D, HKV * D], dim=-1)
            q, k, v = q.view(T, HQ, D), k.view(T, HKV, D), v.view(T, HKV, D)
            q = flashinfer.norm.rmsnorm(q, qw, 1e-6, out=torch.empty(q.shape, dtype=q.dtype, device=dev))
            k = flashinfer.norm.rmsnorm(k, kw, 1e-6, out=torch.empty(k.shape, dtype=k.dtype, device=dev))
            flashinfer.rope.apply_rope_with_cos_sin_cache_inplace(pos, q, k, D, cs, is_neox=True)
            pool_k.index_copy_(0, loc, k)
            pool_v.index_copy_(0, loc, v)

        def new():
            qk_rope_store(qkv, pos, cs, qw, kw, 1e-6, loc, pool_k, pool_v, HQ, HKV, D)

        print(f"| T={T} | {graph_us([old] * 28):.2f} | {graph_us([new] * 28):.2f} |")
    del pool_k, pool_v

if "attn" in parts:
    print()
    print(
        "| decode attention (28 layers, page 16) | bs | context | CUDA-core kernel us/layer | tensor-core kernel us/layer | GB/s (best) |"
    )
    print("|---|---|---|---|---|---|")
    HQ, HKV, D, P, L = 16, 8, 128, 16, 28
    for bs, ctx in [(1, 512), (1, 1024), (8, 512), (64, 512), (256, 512), (256, 1024)]:
        pages = bs * ctx // P
        kv = torch.randn(L, pages, 2, P, HKV, D, device=dev, dtype=torch.bfloat16)  # layer -> (k, v) pages
        q = torch.randn(bs, HQ, D, device=dev, dtype=torch.bfloat16)
        indptr = torch.arange(0, pages + 1, ctx // P, dtype=torch.int32)
        indices = torch.randperm(pages, dtype=torch.int32, device=dev)
        res = {}
        for tc in (False, True):
            w = fi_graph_decode(bs, pages, tc, indptr, indices, HQ, HKV, D, P)
            out = w.run(q, kv[0])
            res[tc] = (graph_us([lambda i=i: w.run(q, kv[i]) for i in range(L)]), out)
        gb = bs * ctx * HKV * D * 2 * 2 / min(res[False][0], res[True][0]) / 1e3
        print(
            f"| | {bs} | {ctx} | {res[False][0]:.2f} | {res[True][0]:.2f} | {gb:.0f} | rel diff {rel(res[True][1], res[False][1]):.1e}"
        )
        del kv

if "small_attn" in parts:
    # Our split-KV decode (kernels/decode_attention.py) against FlashInfer's tensor-core decode
    # (the default), per layer, at the batch sizes it is meant for; K and V pages apart.
    from minisgl_edu.kernels.decode_attention import BLOCK, SplitKVDecode, num_splits

    print()
    print(
        "| small-batch decode attention (28 layers, page 16) | bs | context | FlashInfer TC us/layer | ours: splits, keys per step -> us/layer |"
    )
    print("|---|---|---|---|---|")
    HQ, HKV, D, P, L = 16, 8, 128, 16, 28
    for bs, ctx in [(1, 512), (1, 1024), (2, 512), (4, 512)]:
        pages = bs * ctx // P
        k_pages, v_pages = (torch.randn(L, pages, P, HKV, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
        q = torch.randn(bs, HQ, D, device=dev, dtype=torch.bfloat16)
        indptr = torch.arange(0, pages + 1, ctx // P, dtype=torch.int32)
        indices = torch.randperm(pages, dtype=torch.int32, device=dev)
        w = fi_graph_decode(bs, pages, True, indptr, indices, HQ, HKV, D, P)
        want = w.run(q, (k_pages[0], v_pages[0]))
        fi_us = graph_us([lambda i=i: w.run(q, (k_pages[i], v_pages[i])) for i in range(L)])
        ours = []
        for splits in (4, 8, 16, 32):
            for block in sorted({16, 32, 64, BLOCK}):
                o = SplitKVDecode(
                    bs,
                    HQ,
                    HKV,
                    D,
                    P,
                    D**-0.5,
                    torch.zeros(pages, dtype=torch.int32, device=dev),
                    splits=splits,
                    block=block,
                )
                o.plan(indptr.pin_memory(), indices, torch.full((bs,), ctx, dtype=torch.int32).pin_memory())
                assert rel(o.run(q, (k_pages[0], v_pages[0])), want) < 1e-2
                us = graph_us([lambda i=i, o=o: o.run(q, (k_pages[i], v_pages[i])) for i in range(L)])
                ours.append((us, splits, block))
        ours.sort()
        best = ", ".join(f"{s_}, {b_} -> {u:.2f}" for u, s_, b_ in ours[:4])
        default = next(u for u, s_, b_ in ours if s_ == num_splits(bs, HKV) and b_ == BLOCK)
        print(f"| | {bs} | {ctx} | {fi_us:.2f} | best {best}; default ({num_splits(bs, HKV)}, {BLOCK}) {default:.2f} |")
        del k_pages, v_pages
