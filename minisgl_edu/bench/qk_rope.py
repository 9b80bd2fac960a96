"""The fused q/k norm + RoPE + K/V store kernel, timed by tokens per program (CUDA).

    python -m minisgl_edu.bench.qk_rope               # Qwen3-0.6B's heads: 16 q, 8 KV, 128 wide

Where this sits: beside the engine, not on the request path. `kernels/qk_rope_store.py` gives
each program a tile of `TOKENS_PER_PROGRAM` tokens, the same for every batch; this times every
tile size at every token count, each call replayed in a CUDA graph (the launch cost left out, as
in the engine's decode graphs), and checks that each tile size writes what one token per program
writes. The kernel's tile (marked *) should be the fastest of its row, or close, in every row.
"""

from __future__ import annotations

import argparse

import torch

TILES = (1, 2, 4, 8, 16, 32)
TOKENS = (1, 4, 16, 64, 128, 256, 1024, 8100, 16384)


def main(argv: list[str] | None = None) -> None:
    from triton.testing import do_bench_cudagraph

    from minisgl_edu.kernels import qk_rope_store as rope
    from minisgl_edu.models.rope import RotaryEmbedding

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, nargs=3, default=(16, 8, 128), metavar=("Q", "KV", "DIM"))
    args = ap.parse_args(argv)
    hq, hkv, d = args.heads
    dev = "cuda"
    rot = RotaryEmbedding(d, 40960, 1e6).to(dev)
    rot.build_cache(dev)
    qw, kw = ((1 + 0.1 * torch.randn(d, device=dev)).bfloat16() for _ in range(2))
    slots = 2 * max(TOKENS)
    k_pool = torch.zeros(slots, hkv, d, device=dev, dtype=torch.bfloat16)
    v_pool = torch.zeros_like(k_pool)
    chosen = rope.TOKENS_PER_PROGRAM
    print(
        f"{'tokens':>7} " + " ".join(f"{'tile ' + str(b):>8}" for b in TILES) + "   (us per call; * the kernel's pick)"
    )
    try:
        for n in TOKENS:
            qkv = torch.randn(n, (hq + 2 * hkv) * d, device=dev).bfloat16()
            pos = torch.randint(0, 4000, (n,), device=dev)
            loc = torch.randperm(slots, device=dev)[:n]

            def call():
                return rope.qk_rope_store(qkv, pos, rot.cos_sin_table(), qw, kw, 1e-6, loc, k_pool, v_pool, hq, hkv, d)

            cells, first = [], None
            for tile in TILES:
                rope.TOKENS_PER_PROGRAM = tile
                out = (call().float(), k_pool[loc].float(), v_pool[loc].clone())
                if first is None:
                    first = out
                # the norm's sum runs in another order in a tile: q and k within bf16 rounding
                assert all(torch.allclose(a, b, atol=2e-2, rtol=1e-2) for a, b in zip(out[:2], first[:2]))
                assert torch.equal(out[2], first[2]), f"{n} tokens, tile {tile}: V differs"
                us = do_bench_cudagraph(call, rep=50) * 1e3
                cells.append(f"{us:>7.1f}{'*' if tile == chosen else ' '}")
            print(f"{n:>7} " + " ".join(cells))
    finally:
        rope.TOKENS_PER_PROGRAM = chosen


if __name__ == "__main__":
    main()
