"""y = x @ W^T for ONE row of x, optionally with the step before it folded in (CUDA only).

Where this sits on the request path: a decode batch of a single request (batch 1, the latency
case). The CUDA linear layers (`models/cuda_layers.py`) send every one-row matmul here, and at
batch 1 `CudaDecoderLayer` also asks it to do the layer's two RMSNorms and the SwiGLU activation on
the way in ("fold"), so a layer is 7 kernels instead of 10:

    qkv   = gemv(rmsnorm(hidden + residual))      PROLOGUE "add_norm" (layer 0: "norm")
    ...   rope + K/V store, attention, o = gemv(attn_out)
    gu    = gemv(rmsnorm(o + residual))           PROLOGUE "add_norm"
    down  = gemv(silu(gate) * up)                 PROLOGUE "silu_mul"

Why a kernel of its own for one row: such a matmul only reads W (2-12 MB per matrix in
Qwen3-0.6B), and a kernel that short is mostly start-up and waiting. Each program here owns a few
rows of W and loads them whole, [BLOCK_N, K] in one go, *before* `gdc_wait()`: under programmatic
dependent launch (kernels/pdl.py) its share of W is already on the way while the previous kernel
still runs. After the wait only x is left to read (K values, from L2), so folding a norm or the
activation into that read costs a few hundred nanoseconds, where a separate kernel costs a launch
and a round trip through memory.

Every program computes the prologue for the whole of x itself (they all need all of it); in
"add_norm" program 0 alone also writes the new residual stream (hidden + residual) to `r_out`,
a fresh tensor: writing it in place would race with programs still reading the old one.
Rounding follows the unfused path: the sum is rounded to the model dtype (as the residual stream
is stored), the norm is computed in float32 and rounded, then multiplied by the weight.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl

MAX_K = 4096  # a program holds [BLOCK_N, K] of W in registers
PROLOGUES = {"none": 0, "silu_mul": 1, "add_norm": 2, "norm": 3}


@triton.jit
def _gemv_kernel(
    x_ptr,
    r_ptr,
    nw_ptr,
    r_out_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    N,
    stride_wn,
    eps,
    K: tl.constexpr,
    K_PAD: tl.constexpr,
    PROLOGUE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, K_PAD)  # K padded to a power of two, the padding masked off
    k_mask = offs_k < K
    w = tl.load(
        w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :], mask=(offs_n[:, None] < N) & k_mask[None, :], other=0.0
    )
    if USE_PDL:
        tl.extra.cuda.gdc_wait()  # from here on, the previous kernel's output is visible
        tl.extra.cuda.gdc_launch_dependents()
    dtype = y_ptr.dtype.element_ty
    if PROLOGUE == 1:  # x = [gate | up], K each
        gate = tl.load(x_ptr + offs_k, mask=k_mask, other=0.0).to(tl.float32)
        up = tl.load(x_ptr + K + offs_k, mask=k_mask, other=0.0).to(tl.float32)
        x = (gate / (1.0 + tl.exp(-gate)) * up).to(dtype)
    elif PROLOGUE >= 2:  # RMSNorm of x (+ the residual stream), times the norm weight
        h = tl.load(x_ptr + offs_k, mask=k_mask, other=0.0)
        if PROLOGUE == 2:
            h = (h.to(tl.float32) + tl.load(r_ptr + offs_k, mask=k_mask, other=0.0).to(tl.float32)).to(dtype)
            tl.store(r_out_ptr + offs_k, h, mask=k_mask & (pid == 0))
        hf = h.to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(hf * hf, axis=0) / K + eps)
        nw = tl.load(nw_ptr + offs_k, mask=k_mask, other=0.0).to(tl.float32)
        x = ((hf * rstd).to(dtype).to(tl.float32) * nw).to(dtype)
    else:
        x = tl.load(x_ptr + offs_k, mask=k_mask, other=0.0)
    acc = tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs_n, acc.to(dtype), mask=offs_n < N)


def pick_config(N: int, K: int) -> tuple[int, int]:
    """(BLOCK_N, num_warps) for W [N, K]: 128-1,024 programs for Qwen3-0.6B's four matrices.

    Picked on an H200 by the GPU time of a whole bs-1 decode graph (a tile that is fastest for one
    matrix timed alone need not be inside the chain): qkv [4096, 1024] 4 rows and 8 warps,
    gate_up [6144, 1024] 8 and 4, o [1024, 2048] 8 and 4, down [1024, 3072] 4 and 4.
    """
    if N >= 6144:
        return 8, 4
    if N >= 4096:
        return 4, 8
    return (4, 4) if K >= 3072 else (8, 4)


def supports(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """One half-precision row, W contiguous along K with K <= MAX_K. (The device is chosen when the
    model is built: CUDA, or the CPU under Triton's interpreter in the tests.)"""
    return (
        x.dim() == 2
        and x.shape[0] == 1
        and x.dtype == weight.dtype
        and x.dtype in (torch.bfloat16, torch.float16)
        and x.is_contiguous()
        and weight.stride(1) == 1
        and weight.shape[1] <= MAX_K
    )


def gemv(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    prologue: str = "none",
    residual: torch.Tensor | None = None,
    norm_weight: torch.Tensor | None = None,
    eps: float = 0.0,
    config: tuple[int, int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(y, new_residual) for one row; y = prologue(x) @ W^T (+ bias), W [N, K].

    prologue "none": x [1, K]; "silu_mul": x = [gate | up] [1, 2K]; "norm": rmsnorm(x) with
    `norm_weight`, `eps`; "add_norm": rmsnorm(x + residual), and new_residual = x + residual
    (otherwise None).
    """
    N, K = weight.shape
    block_n, num_warps = config or pick_config(N, K)
    y = torch.empty((1, N), dtype=x.dtype, device=x.device)
    r_out = torch.empty((1, K), dtype=x.dtype, device=x.device) if prologue == "add_norm" else None
    _gemv_kernel[(triton.cdiv(N, block_n),)](
        x,
        residual if residual is not None else x,
        norm_weight if norm_weight is not None else x,
        r_out if r_out is not None else y,
        weight,
        bias if bias is not None else weight,
        y,
        N,
        weight.stride(0),
        eps,
        K=K,
        K_PAD=triton.next_power_of_2(K),
        PROLOGUE=PROLOGUES[prologue],
        HAS_BIAS=bias is not None,
        BLOCK_N=block_n,
        num_warps=num_warps,
        **pdl.launch_options(x.device),
    )
    return y, r_out
