"""y = x @ W^T for a handful of rows of x: the linear layers of a small decode batch (CUDA only).

Where this sits on the request path: every linear layer of a decoder layer (`qkv_proj`,
`o_proj`, `gate_up_proj`, `down_proj`) when the batch has at most `MAX_ROWS` tokens, i.e. decode
at batch 1 to 16, through the CUDA linear layers of `models/cuda_layers.py`. Such a multiply reads the whole weight matrix (4 to 13 MB in Qwen3-0.6B) to
compute a few output rows, so its speed is the speed of reading W. cuBLAS reads most such
matrices about as fast as this kernel, but for some shapes (o_proj at 1-4 rows) it picks a split-K
kernel plus a reduction, about twice as slow (`scripts/maintainer/gpu_kernel_bench.py` compares them).

The kernel: each program owns BLOCK_N output columns (rows of W) and walks the whole K dimension,
loading a [BLOCK_N, BLOCK_K] tile of W (contiguous along K, so the loads coalesce) and the
matching [BLOCK_M, BLOCK_K] slice of x, and accumulates with `tl.dot` in float32. x is padded to
BLOCK_M = 16 rows because the tensor-core dot needs 16; the extra rows cost compute, not memory,
and compute is idle here anyway. N / BLOCK_N programs keep all SMs reading W at once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl

MAX_ROWS = 16  # above this, cuBLAS's tiled GEMMs are the right tool


@triton.jit
def _skinny_gemm_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    stride_xm,
    stride_wn,
    stride_ym,
    K: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :]
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[:, None] < N
    # The first tile of W is loaded before anything else: weights never depend on the previous
    # kernel, so under programmatic dependent launch (see kernels/pdl.py) this load overlaps
    # that kernel's last microseconds. x may be its output: read only after gdc_wait.
    w = tl.load(w_ptrs, mask=n_mask, other=0.0)
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()  # the next kernel may start loading its weights
    x = tl.load(x_ptrs, mask=m_mask, other=0.0)
    acc = tl.dot(x, tl.trans(w), out_dtype=tl.float32)
    for _ in range(BLOCK_K, K, BLOCK_K):  # K (a constant per layer) is a multiple of BLOCK_K: see supports()
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
        x = tl.load(x_ptrs, mask=m_mask, other=0.0)
        w = tl.load(w_ptrs, mask=n_mask, other=0.0)
        acc += tl.dot(x, tl.trans(w))
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask & (offs_n[None, :] < N))


def pick_config(N: int, K: int) -> tuple[int, int, int, int]:
    """(BLOCK_N, BLOCK_K, num_warps, num_stages) for W [N, K]; BLOCK_K 0: no tile divides K.

    Wide matrices (qkv, gate_up) run fastest with 32 columns per program; narrow ones (o, down:
    N = 1024) need 16 to keep enough programs reading, and long K tiles (H200, cold caches).
    """
    block_k = next((b for b in ((512, 256, 128, 64) if N < 4096 else (128, 256, 64)) if K % b == 0), 0)
    return (32, block_k, 4, 4) if N >= 4096 else (16, block_k, 4, 3)


def supports(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Can this multiply use the skinny kernel? (a half-precision batch of <= 16 rows)"""
    return (
        x.dim() == 2
        and x.shape[0] <= MAX_ROWS
        and x.dtype == weight.dtype
        and x.dtype in (torch.bfloat16, torch.float16)
        and weight.stride(1) == 1
        and x.stride(1) == 1
        and x.shape[1] == weight.shape[1]
        and pick_config(*weight.shape)[1] > 0
    )


def skinny_linear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    config: tuple[int, int, int, int] | None = None,
) -> torch.Tensor:
    """F.linear(x, weight, bias) for x [M <= 16, K], weight [N, K] (both contiguous along K).

    `config` = (BLOCK_N, BLOCK_K, num_warps, num_stages); default `pick_config(N, K)`.
    """
    M, K = x.shape
    N = weight.shape[0]
    block_n, block_k, num_warps, num_stages = config or pick_config(N, K)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(N, block_n),)
    _skinny_gemm_kernel[grid](
        x,
        weight,
        bias if bias is not None else weight,
        y,
        M,
        N,
        x.stride(0),
        weight.stride(0),
        y.stride(0),
        K=K,
        HAS_BIAS=bias is not None,
        BLOCK_M=MAX_ROWS,
        BLOCK_N=block_n,
        BLOCK_K=block_k,
        num_warps=num_warps,
        num_stages=num_stages,
        **pdl.launch_options(x.device),
    )
    return y
