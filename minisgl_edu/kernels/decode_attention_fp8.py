"""Paged decode attention over an FP8 KV cache, for every batch size (CUDA only).

Where this sits on the request path: with `--kv-cache-dtype fp8_e4m3` on CUDA, the `triton`
attention backend (`attention/triton_backend.py`) runs every attention layer of every decode batch
through a `SplitKVDecodeFP8`, over pages that hold e4m3 numbers with a float32 scale per token and
KV head (`kvcache/pool.py`): in the captured decode graphs and eagerly. Prefill goes to FlashInfer
after dequantizing (`flashinfer_backend.py`).

Why a kernel of our own: at a large batch, decode attention is a read of every cached K/V byte of
every running request, so its time is bytes / bandwidth, and FP8 pages are half the bytes of
bfloat16. FlashInfer's FP8 decode (0.6.6, Qwen3-0.6B's shape) reads them no faster than its
bfloat16 kernel reads twice as many (docs/benchmarks.md), and it takes one scale per layer, where
our pages carry one per token and head.

The structure is `decode_attention.py`'s: one program per (request, KV head, split), online
softmax over the split's keys, the splits merged by the last one to finish. What differs:

1. Keys arrive in blocks of `BLOCK` tokens as FP8 rows [BLOCK, D], widened to float16 (exact:
   every e4m3 number is a float16 number) and multiplied on tensor cores: the G
   query heads of this KV head padded to 16 rows, `tl.dot(q, k^T)`. The per-token scales are not
   applied to K but to the scores, one multiply per key instead of D:

       q . (k_fp8 * s_k) = (q . k_fp8) * s_k,    sum_t p_t (v_fp8,t * s_v,t) = sum_t (p_t s_v,t) v_fp8,t

2. The loop over blocks is a `for` over `tl.range`, which Triton's compiler pipelines (the loads
   of the next `STAGES - 1` blocks in flight during this block's arithmetic); Triton's CPU
   interpreter cannot take a `for` with runtime bounds, so under it the same block step runs in a
   `while` (`PIPELINE` off).
3. One split per (request, KV head) at large batches (then nothing to merge: the output is
   written directly), more where the batch alone does not fill the GPU (`num_splits`).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu import env
from minisgl_edu.kernels import pdl
from minisgl_edu.kernels.decode_attention import SplitKVDecode

BLOCK = 64  # keys per block: 64 rows of 128 bytes per head (chosen by the benchmark, docs/benchmarks.md)
NUM_WARPS = 4
STAGES = 3  # blocks in flight (compiled kernel only)
TARGET_PROGRAMS = 2048  # programs per launch that `num_splits` aims for (about 16 per SM on the H200)
MIN_Q_ROWS = 16  # tl.dot's smallest M: the G query heads of a KV head are padded to it


@triton.jit
def _fold_block(
    q,
    m,
    l,
    acc,
    k_ptr,
    v_ptr,
    ks_ptr,
    vs_ptr,
    indices_ptr,
    first_page,
    t0,
    end,
    h,
    stride_kslot,
    stride_kh,
    stride_sslot,
    sm_scale,
    PAGE: tl.constexpr,
    BLOCK: tl.constexpr,
    D: tl.constexpr,
):
    """Fold keys t0 .. t0 + BLOCK - 1 (those < end) of KV head h into the running (m, l, acc)."""
    t = t0 + tl.arange(0, BLOCK)
    valid = t < end
    page = tl.load(indices_ptr + first_page + t // PAGE, mask=valid, other=0)
    slot = page.to(tl.int64) * PAGE + t % PAGE  # the key's row in the pool
    rows = slot[:, None] * stride_kslot + h * stride_kh + tl.arange(0, D)[None, :]
    k = tl.load(k_ptr + rows, mask=valid[:, None], other=0.0)  # [BLOCK, D] e4m3
    v = tl.load(v_ptr + rows, mask=valid[:, None], other=0.0)
    ks = tl.load(ks_ptr + slot * stride_sslot + h, mask=valid, other=0.0) * sm_scale  # [BLOCK] float32
    vs = tl.load(vs_ptr + slot * stride_sslot + h, mask=valid, other=0.0)
    scores = tl.dot(q, tl.trans(k.to(q.dtype))) * ks[None, :]  # [GP, BLOCK] float32
    scores = tl.where(valid[None, :], scores, float("-inf"))
    m_new = tl.maximum(m, tl.max(scores, axis=1))  # finite: every block has a valid key
    p = tl.exp(scores - m_new[:, None])
    alpha = tl.exp(m - m_new)  # rescales what was summed under the old max (0 at the start)
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot((p * vs[None, :]).to(q.dtype), v.to(q.dtype))
    return m_new, l, acc


@triton.jit
def _decode_fp8_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    ks_ptr,
    vs_ptr,
    indices_ptr,
    indptr_ptr,
    lens_ptr,
    acc_ptr,
    ml_ptr,
    count_ptr,
    out_ptr,
    sm_scale,
    stride_qb,
    stride_qh,
    stride_kslot,
    stride_kh,
    stride_sslot,
    stride_ob,
    stride_oh,
    NUM_KV: tl.constexpr,
    PAGE: tl.constexpr,
    G: tl.constexpr,
    GP: tl.constexpr,
    D: tl.constexpr,
    S: tl.constexpr,
    BLOCK: tl.constexpr,
    STAGES: tl.constexpr,
    PIPELINE: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    s = tl.program_id(2)
    offs_g = tl.arange(0, GP)
    offs_d = tl.arange(0, D)
    if USE_PDL:  # every input may be the previous kernel's output (the newest K/V: qk_rope_store)
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    kv_len = tl.load(lens_ptr + b)
    first_page = tl.load(indptr_ptr + b)
    chunk = tl.cdiv(kv_len, S)
    start = s * chunk
    end = tl.minimum(start + chunk, kv_len)
    # The G query heads that share KV head h, padded with zero rows to GP (their output is dropped).
    q_rows = q_ptr + b * stride_qb + (h * G + offs_g)[:, None] * stride_qh + offs_d[None, :]
    # Both dot products run in float16, whatever q's dtype: every e4m3 key and value is exact in
    # it, and the softmax weights times the values' scales (below 1) keep 3 more bits than in
    # bfloat16, which over a long context is the difference between 2e-2 and 3e-3 of error. The
    # softmax scale goes on the scores, with the keys' scales, so q is not rounded once more.
    q = tl.load(q_rows, mask=(offs_g < G)[:, None], other=0.0).to(tl.float16)
    m = tl.full([GP], float("-inf"), tl.float32)
    l = tl.zeros([GP], tl.float32)
    acc = tl.zeros([GP, D], tl.float32)
    if PIPELINE:
        for t0 in tl.range(start, end, BLOCK, num_stages=STAGES):
            m, l, acc = _fold_block(
                q, m, l, acc, k_ptr, v_ptr, ks_ptr, vs_ptr, indices_ptr, first_page, t0, end, h,
                stride_kslot, stride_kh, stride_sslot, sm_scale, PAGE, BLOCK, D,
            )  # fmt: skip
    else:
        t0 = start
        while t0 < end:
            m, l, acc = _fold_block(
                q, m, l, acc, k_ptr, v_ptr, ks_ptr, vs_ptr, indices_ptr, first_page, t0, end, h,
                stride_kslot, stride_kh, stride_sslot, sm_scale, PAGE, BLOCK, D,
            )  # fmt: skip
            t0 += BLOCK
    keep = offs_g < G
    o_rows = out_ptr + b * stride_ob + (h * G + offs_g)[:, None] * stride_oh + offs_d[None, :]
    if S == 1:  # the whole context in this program: nothing to merge
        tl.store(o_rows, (acc / l[:, None]).to(out_ptr.dtype.element_ty), mask=keep[:, None])
    else:
        NUM_Q: tl.constexpr = NUM_KV * G
        part = (b * NUM_Q + h * G + offs_g) * S + s  # [request, q head, split]
        tl.store(acc_ptr + part[:, None] * D + offs_d[None, :], acc, mask=keep[:, None])
        tl.store(ml_ptr + part * 2, m, mask=keep)
        tl.store(ml_ptr + part * 2 + 1, l, mask=keep)
        tl.debug_barrier()  # every thread's partial is written before the counter says so
        done = tl.atomic_add(count_ptr + b * NUM_KV + h, 1, sem="acq_rel")
        if done == S - 1:  # the last split of (b, h) merges, as in decode_attention.py
            rows = (b * NUM_Q + h * G + offs_g)[:, None] * S + tl.arange(0, S)[None, :]  # [GP, S]
            ms = tl.load(ml_ptr + rows * 2, mask=keep[:, None], other=0.0, cache_modifier=".cg")
            ls = tl.load(ml_ptr + rows * 2 + 1, mask=keep[:, None], other=1.0, cache_modifier=".cg")
            weight = tl.exp(ms - tl.max(ms, axis=1)[:, None])  # 0 for an empty split (m = -inf)
            accs = tl.load(
                acc_ptr + rows[:, :, None] * D + offs_d[None, None, :], mask=keep[:, None, None], other=0.0,
                cache_modifier=".cg",
            )  # fmt: skip
            out = tl.sum(accs * weight[:, :, None], axis=1) / tl.sum(ls * weight, axis=1)[:, None]
            tl.store(o_rows, out.to(out_ptr.dtype.element_ty), mask=keep[:, None])
            tl.store(count_ptr + b * NUM_KV + h, 0)  # ready for the next layer and the next replay


def num_splits(bs: int, num_kv_heads: int) -> int:
    """Splits per (request, KV head): a power of two, about `TARGET_PROGRAMS` programs in all,
    1..32: at batch 1 a long context is read by 32 programs, at batch 256 each program reads a
    whole context, and no partials are written."""
    return max(1, min(32, triton.next_power_of_2(max(1, TARGET_PROGRAMS // (bs * num_kv_heads)))))


def supports(num_qo_heads: int, num_kv_heads: int, head_dim: int) -> bool:
    group = num_qo_heads // num_kv_heads
    return (
        num_qo_heads % num_kv_heads == 0
        and group <= MIN_Q_ROWS
        and head_dim & (head_dim - 1) == 0
        and 16 <= head_dim <= 256
    )


class SplitKVDecodeFP8(SplitKVDecode):
    """`SplitKVDecode`'s buffers and page lists (`plan`, `use_buffers`), over FP8 pages."""

    def __init__(self, *args, splits: int = 0, block: int = BLOCK, stages: int = STAGES, **kw) -> None:
        super().__init__(*args, splits=splits, block=block, **kw)
        self.splits = splits or num_splits(self.bs, self.hkv)
        self.stages = stages
        # Partials only where there is something to merge.
        if self.splits == 1:
            self.acc = self.ml = self.count
        else:
            dev = self.count.device
            self.acc = torch.empty(self.bs * self.hq * self.splits * self.d, dtype=torch.float32, device=dev)
            self.ml = torch.empty(self.bs * self.hq * self.splits * 2, dtype=torch.float32, device=dev)

    def run(self, q: torch.Tensor, kv: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """q [bs, Hq, D]; kv = the layer's (K, V, K scales, V scales): [slots, Hkv, D] e4m3 and
        [slots, Hkv] float32, the new tokens already in them -> [bs, Hq, D]."""
        k, v, ks, vs = kv
        out = torch.empty((self.bs, self.hq, self.d), dtype=q.dtype, device=q.device)
        g = self.hq // self.hkv
        _decode_fp8_kernel[(self.bs, self.hkv, self.splits)](
            q,
            k,
            v,
            ks,
            vs,
            self.indices,
            self.indptr,
            self.lens,
            self.acc,
            self.ml,
            self.count,
            out,
            self.scale,
            q.stride(0),
            q.stride(1),
            k.stride(0),
            k.stride(1),
            ks.stride(0),
            out.stride(0),
            out.stride(1),
            NUM_KV=self.hkv,
            PAGE=self.page_size,
            G=g,
            GP=max(MIN_Q_ROWS, triton.next_power_of_2(g)),
            D=self.d,
            S=self.splits,
            BLOCK=self.block,
            STAGES=self.stages,
            PIPELINE=not env.get().triton_interpret,
            num_warps=NUM_WARPS,
            **pdl.launch_options(q.device),
        )
        return out
