"""q/k RMSNorm, RoPE and the K/V write into the paged pool, in one kernel (CUDA only).

Where this sits on the request path: in `TritonRopeAttention` (`models/cuda_layers.py`), between
the qkv matmul and the attention kernel. Otherwise those steps are five kernels per layer: Qwen3's
q norm and k norm, RoPE on q and k, and two `index_copy_` into the pool's K and V buffers. At
decode batch 1 each is only a few microseconds of work, but each still pays a kernel's start-up,
every layer over. Here one program per (tile of tokens, head) does all of it, token by token:

    q head h:   x = qkv[t, h*D : (h+1)*D]   -> norm(x) * q_weight -> rotate -> q_out[t, h]
    k head j:   x = qkv[t, (Hq+j)*D : ...]   -> norm(x) * k_weight -> rotate -> K pool[slot(t), j]
                v = qkv[t, (Hq+Hkv+j)*D : ...]                               -> V pool[slot(t), j]

`slot(t)` is the token's KV slot (`out_loc`, chosen by the scheduler's page table). An FP8 pool
(`kvcache/pool.py`) gets each K and V vector as e4m3 numbers and one float32 scale, max|x| / 448,
computed here from the vector the program already holds: the quantization costs no extra pass.

RoPE is the NeoX / rotate-half pairing (i, i + D/2) that HF's Llama, Qwen2 and Qwen3 use, with the angles read
from the model's float32 cat(cos, sin) table at the token's position. The norm and the rotation
stay in float32 in between (one rounding to bf16 at the end, where the separate kernels had two).
Models without q/k norm (Llama, Qwen2) use the same kernel with HAS_NORM off.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl


@triton.jit
def _e4m3(x, scale):
    """Rows of `x` divided by their scales, as e4m3 numbers (clamped: past 448 the cast gives NaN)."""
    return tl.minimum(tl.maximum(x / scale[:, None], -448.0), 448.0).to(tl.float8e4nv)


@triton.jit
def _qk_rope_store_kernel(
    qkv_ptr,
    pos_ptr,
    cos_sin_ptr,
    qw_ptr,
    kw_ptr,
    loc_ptr,
    q_out_ptr,
    k_pool_ptr,
    v_pool_ptr,
    ks_ptr,
    vs_ptr,
    num_tokens,
    stride_qkv,
    stride_cs,
    stride_qo,
    stride_pool,
    stride_scale,
    eps,
    NUM_Q: tl.constexpr,
    NUM_KV: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    HAS_NORM: tl.constexpr,
    FP8: tl.constexpr,
    BLOCK_T: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    h = tl.program_id(1)  # q heads 0..NUM_Q-1, then k heads
    # This program's tokens: a tile of BLOCK_T rows, one head each (the last tile masked).
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    live = t < num_tokens
    HALF: tl.constexpr = HEAD_DIM // 2
    offs = tl.arange(0, HALF)
    mask = live[:, None]
    if HAS_NORM:  # weights first: under PDL (kernels/pdl.py) they may be read before gdc_wait
        if h < NUM_Q:
            w1 = tl.load(qw_ptr + offs).to(tl.float32)
            w2 = tl.load(qw_ptr + HALF + offs).to(tl.float32)
        else:
            w1 = tl.load(kw_ptr + offs).to(tl.float32)
            w2 = tl.load(kw_ptr + HALF + offs).to(tl.float32)
    # The step's inputs (position, its cos/sin, the KV slot) are read before `gdc_wait()` too: they
    # were copied in before the forward pass, and this kernel can only start once the qkv matmul
    # before it has passed its own wait, i.e. once every earlier kernel and copy has finished
    # (pdl.py). Only the qkv rows are left to load after the wait.
    pos = tl.load(pos_ptr + t, mask=live, other=0)
    cs = cos_sin_ptr + pos[:, None] * stride_cs + offs[None, :]
    cos = tl.load(cs, mask=mask, other=0.0)
    sin = tl.load(cs + HALF, mask=mask, other=0.0)
    slot = tl.load(loc_ptr + t, mask=live, other=0)
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    rows = qkv_ptr + t[:, None] * stride_qkv
    # q head h and k head j = h - NUM_Q both start at column h * HEAD_DIM of the qkv row.
    x1 = tl.load(rows + h * HEAD_DIM + offs[None, :], mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(rows + h * HEAD_DIM + HALF + offs[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_NORM:
        rstd = 1.0 / tl.sqrt((tl.sum(x1 * x1, axis=1) + tl.sum(x2 * x2, axis=1)) / HEAD_DIM + eps)
        x1 = x1 * rstd[:, None] * w1[None, :]
        x2 = x2 * rstd[:, None] * w2[None, :]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    # (One name per branch: Triton gives a name set in both branches of a runtime `if` one type,
    # and with FP8 pages the q output (bf16) and the K pool (e4m3) point to different ones.)
    if h < NUM_Q:
        q_dst = q_out_ptr + t[:, None] * stride_qo + h * HEAD_DIM + offs[None, :]
        tl.store(q_dst, o1.to(q_out_ptr.dtype.element_ty), mask=mask)
        tl.store(q_dst + HALF, o2.to(q_out_ptr.dtype.element_ty), mask=mask)
    else:
        j = h - NUM_Q
        full = tl.arange(0, HEAD_DIM)
        dst = k_pool_ptr + slot[:, None] * stride_pool + j * HEAD_DIM + offs[None, :]
        v_dst = v_pool_ptr + slot[:, None] * stride_pool + j * HEAD_DIM + full[None, :]
        v = tl.load(rows + (NUM_Q + NUM_KV + j) * HEAD_DIM + full[None, :], mask=mask, other=0.0).to(tl.float32)
        if FP8:  # e4m3 with one float32 scale per vector, as `KVPool.store` writes them
            k_max = tl.maximum(tl.max(tl.abs(o1), axis=1), tl.max(tl.abs(o2), axis=1))
            k_scale = tl.maximum(k_max / 448.0, 1e-12)
            v_scale = tl.maximum(tl.max(tl.abs(v), axis=1) / 448.0, 1e-12)
            tl.store(ks_ptr + slot * stride_scale + j, k_scale, mask=live)
            tl.store(vs_ptr + slot * stride_scale + j, v_scale, mask=live)
            tl.store(dst, _e4m3(o1, k_scale), mask=mask)
            tl.store(dst + HALF, _e4m3(o2, k_scale), mask=mask)
            tl.store(v_dst, _e4m3(v, v_scale), mask=mask)
        else:
            tl.store(dst, o1.to(k_pool_ptr.dtype.element_ty), mask=mask)
            tl.store(dst + HALF, o2.to(k_pool_ptr.dtype.element_ty), mask=mask)
            tl.store(v_dst, v.to(v_pool_ptr.dtype.element_ty), mask=mask)


# Tokens per program. One token per program would be the shortest path at decode batch 1, but a
# prompt chunk of thousands of tokens then runs as one-warp programs that each wait on their loads
# (a position, then its angles, then a row of 256 bytes). On an H100, Qwen3-0.6B's heads (`python
# -m minisgl_edu.bench.qk_rope`, docs/benchmarks.md): 8,100 tokens 235 us one per program, 48 us
# in tiles of 8; 256 tokens 8.4 against 1.9 us; 1 token 1.3 against 1.2 us. The tile is the same
# for every batch on purpose: a token's q and k then come out as the same bits in a decode batch of
# one and in a prompt chunk (the norm's sum runs in the same order), so a mixed batch samples the
# tokens that separate prefill and decode batches sample.
TOKENS_PER_PROGRAM = 8


def supports(head_dim: int) -> bool:
    """The kernel handles a head as two halves of `tl.arange(0, head_dim // 2)`: a power of two."""
    return head_dim >= 2 and head_dim & (head_dim - 1) == 0


def qk_rope_store(
    qkv: torch.Tensor,
    positions: torch.Tensor,
    cos_sin: torch.Tensor,
    q_weight: torch.Tensor | None,
    k_weight: torch.Tensor | None,
    eps: float,
    out_loc: torch.Tensor,
    k_pool: torch.Tensor,
    v_pool: torch.Tensor,
    num_q: int,
    num_kv: int,
    head_dim: int,
    k_scale: torch.Tensor | None = None,
    v_scale: torch.Tensor | None = None,
) -> torch.Tensor:
    """-> q [T, num_q, head_dim] (normed, rotated); k and v are written into the pools at `out_loc`.

    qkv: [T, (num_q + 2 num_kv) * head_dim], rows contiguous; k_pool, v_pool: one layer of the
    pool, [slots, num_kv, head_dim]; cos_sin: float32 [max_pos, head_dim]. An FP8 pool
    (`kv_cache_dtype="fp8_e4m3"`) also passes its scales, [slots, num_kv] float32 each.
    """
    T = qkv.shape[0]
    q = torch.empty((T, num_q, head_dim), dtype=qkv.dtype, device=qkv.device)
    if T == 0:
        return q
    has_norm = q_weight is not None
    fp8 = k_scale is not None
    _qk_rope_store_kernel[(triton.cdiv(T, TOKENS_PER_PROGRAM), num_q + num_kv)](
        qkv,
        positions,
        cos_sin,
        q_weight if has_norm else cos_sin,
        k_weight if has_norm else cos_sin,
        out_loc,
        q,
        k_pool,
        v_pool,
        k_scale if fp8 else cos_sin,
        v_scale if fp8 else cos_sin,
        T,
        qkv.stride(0),
        cos_sin.stride(0),
        q.stride(0),
        k_pool.stride(0),
        k_scale.stride(0) if fp8 else 0,
        eps,
        NUM_Q=num_q,
        NUM_KV=num_kv,
        HEAD_DIM=head_dim,
        HAS_NORM=has_norm,
        FP8=fp8,
        BLOCK_T=TOKENS_PER_PROGRAM,
        num_warps=min(TOKENS_PER_PROGRAM, 4),
        **pdl.launch_options(qkv.device),
    )
    return q
