"""y = x @ W^T for a handful of rows of x: the linear layers of a small decode batch (CUDA only).

Where this sits on the request path: every linear layer of a decoder layer (`qkv_proj`,
`o_proj`, `gate_up_proj`, `down_proj`) when the batch has at most `MAX_ROWS` tokens, i.e. decode
at batch 1 to 16. Such a multiply reads the whole weight matrix (4 to 13 MB in Qwen3-0.6B) to
compute a few output rows, so its speed is the speed of reading W. Measured on an H200 with cold
caches (docs/benchmarks.md), cuBLAS reads three of the four matrices about as fast as this kernel,
but for o_proj at 1-4 rows it picks a split-K kernel plus a reduction: 10.4 us against 5.8 us.

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

MAX_ROWS = 16  # above this, cuBLAS's tiled GEMMs are the right tool


@triton.jit
def _skinny_gemm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, r_ptr, r_out_ptr, g_ptr, eps, M, N, stride_xm, stride_wn,
                        stride_ym, K: tl.constexpr, HAS_BIAS: tl.constexpr, NORM: tl.constexpr,
                        HAS_RESIDUAL: tl.constexpr, SILU_MUL: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[:, None] < N
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if SILU_MUL:  # the "up" rows of W sit N rows below the "gate" rows
        acc_up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if NORM:
        sum_sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):  # K (a constant per layer) is a multiple of BLOCK_K: see supports()
        x = tl.load(x_ptrs, mask=m_mask, other=0.0)
        if NORM:
            # RMSNorm folded in: norm(s) @ W^T = rstd * ((s * g) @ W^T), with rstd = 1/rms(s) one
            # number per row, so each program multiplies by (s * g) and scales its sums at the end.
            s = x.to(tl.float32)
            if HAS_RESIDUAL:  # s = hidden + residual, the new residual stream
                r_offs = offs_m[:, None] * K + k0 + offs_k[None, :]
                s += tl.load(r_ptr + r_offs, mask=m_mask, other=0.0).to(tl.float32)
                if pid == 0:  # every program computes s; one writes it out
                    tl.store(r_out_ptr + r_offs, s.to(r_out_ptr.dtype.element_ty), mask=m_mask)
            sum_sq += tl.sum(s * s, axis=1)
            g = tl.load(g_ptr + k0 + offs_k).to(tl.float32)
            x = (s * g[None, :]).to(w_ptr.dtype.element_ty)
        w = tl.load(w_ptrs, mask=n_mask, other=0.0)
        acc += tl.dot(x, tl.trans(w))
        if SILU_MUL:
            acc_up += tl.dot(x, tl.trans(tl.load(w_ptrs + N * stride_wn, mask=n_mask, other=0.0)))
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    if NORM:
        rstd = 1.0 / tl.sqrt(sum_sq / K + eps)
        acc *= rstd[:, None]
        if SILU_MUL:
            acc_up *= rstd[:, None]
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
        if SILU_MUL:
            acc_up += tl.load(b_ptr + N + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    if SILU_MUL:  # silu(gate) * up, what FlashInfer's silu_and_mul computes, on the fly
        acc = acc * tl.sigmoid(acc) * acc_up
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask & (offs_n[None, :] < N))


def pick_config(N: int, K: int) -> tuple[int, int, int, int]:
    """(BLOCK_N, BLOCK_K, num_warps, num_stages) for W [N, K]; BLOCK_K 0: no tile divides K.

    Measured on an H200 with cold caches (scripts/gpu_kernel_bench.py, docs/benchmarks.md): wide
    matrices (qkv, gate_up) like 32 columns per program; narrow ones (o, down: N = 1024) need
    16 to keep enough programs reading, and long K tiles.
    """
    block_k = next((b for b in ((512, 256, 128, 64) if N < 4096 else (128, 256, 64)) if K % b == 0), 0)
    return (32, block_k, 4, 4) if N >= 4096 else (16, block_k, 4, 3)


def supports(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Can this multiply use the skinny kernel? (a CUDA half-precision batch of <= 16 rows)"""
    return (x.is_cuda and x.dim() == 2 and x.shape[0] <= MAX_ROWS and x.dtype == weight.dtype
            and x.dtype in (torch.bfloat16, torch.float16) and weight.stride(1) == 1 and x.stride(1) == 1
            and x.shape[1] == weight.shape[1] and pick_config(*weight.shape)[1] > 0)


def skinny_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                  config: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """F.linear(x, weight, bias) for x [M <= 16, K], weight [N, K] (both contiguous along K).

    `config` = (BLOCK_N, BLOCK_K, num_warps, num_stages); default `pick_config(N, K)`.
    """
    return _launch(x, weight, bias, config=config)


def supports_norm(x: torch.Tensor, weight: torch.Tensor, silu_mul: bool) -> bool:
    """Can `norm_linear` take this multiply? (as `supports`, and whole gate/up halves)"""
    return supports(x, weight) and x.is_contiguous() and not (silu_mul and weight.shape[0] % 2)


def norm_linear(hidden: torch.Tensor, residual: torch.Tensor | None, norm_weight: torch.Tensor, eps: float,
                weight: torch.Tensor, bias: torch.Tensor | None = None,
                silu_mul: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The start of a decoder sub-block at <= 16 tokens, in one kernel instead of two or three:

        residual' = hidden + residual            (hidden alone when residual is None: layer 0)
        y = rmsnorm(residual') @ weight^T + bias
        y = silu(y[:, :N/2]) * y[:, N/2:]        (with silu_mul: gate_up_proj's activation)

    Returns (y, residual'). residual' is a new tensor (the kernel's programs all read the old
    residual, so none may overwrite it); with residual None it is `hidden` itself.
    """
    assert residual is None or (residual.is_contiguous() and residual.shape == hidden.shape)
    r_out = torch.empty_like(hidden) if residual is not None else hidden
    y = _launch(hidden, weight, bias, residual=residual, r_out=r_out, norm_weight=norm_weight, eps=eps,
                silu_mul=silu_mul)
    return y, r_out


def _launch(x, weight, bias=None, residual=None, r_out=None, norm_weight=None, eps=0.0, silu_mul=False,
            config=None) -> torch.Tensor:
    M, K = x.shape
    N = weight.shape[0] // 2 if silu_mul else weight.shape[0]  # output columns
    block_n, block_k, num_warps, num_stages = config or pick_config(*weight.shape)
    if silu_mul:
        # Each program reads BLOCK_N gate rows and BLOCK_N up rows: half the columns, the same W
        # per program (but tl.dot needs at least 16 columns).
        block_n = max(block_n // 2, 16)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(N, block_n),)
    _skinny_gemm_kernel[grid](
        x, weight, bias if bias is not None else weight, y,
        residual if residual is not None else x, r_out if r_out is not None else x,
        norm_weight if norm_weight is not None else weight, eps, M, N, x.stride(0), weight.stride(0), y.stride(0),
        K=K, HAS_BIAS=bias is not None, NORM=norm_weight is not None, HAS_RESIDUAL=residual is not None,
        SILU_MUL=silu_mul, BLOCK_M=MAX_ROWS, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=num_warps, num_stages=num_stages,
    )
    return y
