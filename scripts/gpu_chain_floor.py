"""How fast can a chain of small dependent kernels go? (CUDA only; the batch-1 decode question)

    python scripts/gpu_chain_floor.py

A batch-1 decode step of Qwen3-0.6B is ~280 kernels in a row (10 per layer), each waiting for
the previous one. This prints, as GPU time per kernel inside a CUDA graph of 280 launches:
1. the floor: a kernel that only reads 1,024 values the previous one wrote and writes them back,
   with 1 and 128 programs, with and without programmatic dependent launch (PDL);
2. our skinny GEMM on Qwen3-0.6B's four matrices at one row, the weights cold (every call reads
   another copy, as in a step) and hot (the same 2-12 MB matrix every call, so it stays in L2):
   how much of a matmul's time is reading HBM and how much is the kernel being a kernel;
3. the one-row kernel (`kernels/gemv.py`), cold, for a few BLOCK_N and warp counts.
"""

import torch
import triton
import triton.language as tl

from minisgl_edu.bench.graph_timer import graph_us
from minisgl_edu.kernels import pdl
from minisgl_edu.kernels.gemv import gemv
from minisgl_edu.kernels.skinny_gemm import skinny_linear

dev = torch.device("cuda")
CHAIN = 280
REPLAYS = 20


@triton.jit
def _touch(x_ptr, y_ptr, BLOCK: tl.constexpr, USE_PDL: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1.0)


rows = []
bufs = [torch.zeros(128 * 1024, device=dev) for _ in range(2)]
for programs in (1, 128):
    block = 1024 // programs if programs > 1 else 1024
    for use_pdl in (False, True):
        opts = {"USE_PDL": True, "launch_pdl": True} if use_pdl else {"USE_PDL": False}

        def step(i, programs=programs, block=block, opts=opts):
            return lambda: _touch[(programs,)](bufs[i % 2], bufs[(i + 1) % 2], BLOCK=block, **opts)

        us = graph_us([step(i) for i in range(CHAIN)], REPLAYS)
        rows.append((f"floor: {programs} program(s), 1,024 values", "PDL" if use_pdl else "no PDL", us))

assert pdl.enabled(dev), "run on Hopper or newer: the skinny GEMM uses PDL there"
x = torch.randn(1, 3072, device=dev, dtype=torch.bfloat16)
for name, n, k in (("qkv", 4096, 1024), ("o", 1024, 2048), ("gate_up", 6144, 1024), ("down", 1024, 3072)):
    copies = max(4, int(300e6 // (n * k * 2)))
    ws = [torch.randn(n, k, device=dev, dtype=torch.bfloat16) / k**0.5 for _ in range(copies)]
    xk = x[:, :k].contiguous()
    cold = graph_us([lambda i=i: skinny_linear(xk, ws[i % copies]) for i in range(CHAIN)], REPLAYS)
    hot = graph_us([lambda: skinny_linear(xk, ws[0]) for _ in range(CHAIN)], REPLAYS)
    mb = n * k * 2 / 1e6
    rows.append((f"skinny GEMM {name} ({mb:.1f} MB), cold", f"{mb / cold:.2f} TB/s", cold))
    rows.append((f"skinny GEMM {name} ({mb:.1f} MB), hot (L2)", f"{mb / hot:.2f} TB/s", hot))
    ref = xk.float() @ ws[0].float().T
    for block_n in (2, 4, 8, 16):
        for warps in (4, 8):
            err = float((gemv(xk, ws[0], config=(block_n, warps))[0].float() - ref).norm() / ref.norm())
            assert err < 1e-2, (name, block_n, warps, err)
            us = graph_us(
                [lambda i=i: gemv(xk, ws[i % copies], config=(block_n, warps)) for i in range(CHAIN)], REPLAYS
            )
            rows.append((f"gemv {name}, cold, BLOCK_N {block_n}, {warps} warps", f"{mb / us:.2f} TB/s", us))
    ws = None  # free this shape's copies before the next

print(
    f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
    f"{CHAIN} launches per graph"
)
print("| kernel | note | µs per kernel |\n|---|---|---|")
for what, note, us in rows:
    print(f"| {what} | {note} | {us:.2f} |")
