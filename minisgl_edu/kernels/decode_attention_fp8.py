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

The online softmax and the merge of splits are `decode_attention.py`'s. What differs:

1. **One program reads whole tokens.** A slot of the pool holds the token's K for every KV head
   side by side: Hkv * D bytes in one piece (1 KB for Qwen3-0.6B), and a page holds page_size of
   them back to back. So a program takes one request (one split of its context) and all of its
   query heads, and reads blocks of `ROWS` (token, KV head) rows: every byte of each token it
   touches, none of them twice. (One program per KV head instead reads 128 bytes every 1 KB, and
   each KV head's program reads the token's scales and page id again: 0.71x of the speed of
   FlashInfer's bfloat16 kernel on the H200, where this one is faster; docs/benchmarks.md.)
2. **A mask instead of a loop over heads.** All query heads times all rows is one `tl.dot`,
   q [Hq, D] x K^T [D, ROWS]; a query head keeps the scores of its own KV head's rows and the
   others become -inf, so its softmax weights there are 0 and the second dot, P [Hq, ROWS] x
   V [ROWS, D], adds only its own head's values. Most of that arithmetic is thrown away (Hkv - 1
   of every Hkv products), but tensor cores have it to spare. (Nsight Compute puts the
   kernel's time in the instructions around the copy, not in the tensor cores: docs/benchmarks.md.)
3. **Scales on the scores, float16 on the tensor cores.** The per-token scales are applied to the
   scores and the softmax weights, one multiply per row instead of D:

       q . (k_fp8 * s_k) = (q . k_fp8) * s_k,    sum_t p_t (v_fp8,t * s_v,t) = sum_t (p_t s_v,t) v_fp8,t

   Both dots take float16 operands whatever q's dtype: every e4m3 number is exact in it, and
   the weights p * s_v (below 1) keep 3 more bits than in bfloat16, which over a long context is
   the difference between 2e-2 and 3e-3 of error.
4. The loop over blocks is a `for` over `tl.range`, which Triton's compiler pipelines (the loads
   of the next `STAGES - 1` blocks in flight during this block's arithmetic); Triton's CPU
   interpreter cannot take a `for` with runtime bounds, so under it the same block step runs in a
   `while` (`PIPELINE` off).
5. Splits: about `TARGET_PROGRAMS` programs per launch (`num_splits`), so that a large batch's
   long and short contexts even out across the GPU; the last split of a request to finish merges.
   A split's share of the context is a whole number of blocks, so no block straddles two pages.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu import env
from minisgl_edu.kernels import pdl
from minisgl_edu.kernels.decode_attention import SplitKVDecode

ROWS = 128  # (token, KV head) rows per block: 16 tokens of Qwen3-0.6B's 8 heads (the benchmark's best)
NUM_WARPS = 4
STAGES = 2  # blocks in flight (compiled kernel only)
TARGET_PROGRAMS = 2048  # programs per launch that `num_splits` aims for (about 16 per SM on the H200)
MAX_SPLITS = 32
MIN_Q_ROWS = 16  # tl.dot's smallest M: the query heads are padded to it


@triton.jit
def _fold_block(
    q,
    m,
    l,
    acc,
    own,
    k_ptr,
    v_ptr,
    ks_ptr,
    vs_ptr,
    indices_ptr,
    first_page,
    t0,
    end,
    stride_kslot,
    stride_sslot,
    sm_scale,
    NUM_KV: tl.constexpr,
    KVP: tl.constexpr,
    PAGE: tl.constexpr,
    BLOCK: tl.constexpr,
    D: tl.constexpr,
):
    """Fold tokens t0 .. t0 + BLOCK - 1 (those < end), every KV head of each, into (m, l, acc)."""
    r = tl.arange(0, BLOCK * KVP)  # row r: token t0 + r // KVP, KV head r % KVP
    t = t0 + r // KVP
    head = r % KVP
    valid = (t < end) & (head < NUM_KV)
    page = tl.load(indices_ptr + first_page + t // PAGE, mask=valid, other=0)
    slot = page.to(tl.int64) * PAGE + t % PAGE  # the token's row in the pool
    rows = slot[:, None] * stride_kslot + (head * D)[:, None] + tl.arange(0, D)[None, :]
    # Both widened to float16 as soon as they arrive (exact for every e4m3 number): converting V here,
    # before the scores, rather than inside the second dot is ~8% faster on an H100 (docs/benchmarks.md).
    k = tl.load(k_ptr + rows, mask=valid[:, None], other=0.0).to(tl.float16)  # [BLOCK * KVP, D]
    v = tl.load(v_ptr + rows, mask=valid[:, None], other=0.0).to(tl.float16)
    ks = tl.load(ks_ptr + slot * stride_sslot + head, mask=valid, other=0.0) * sm_scale  # float32
    vs = tl.load(vs_ptr + slot * stride_sslot + head, mask=valid, other=0.0)
    scores = tl.dot(q, tl.trans(k)) * ks[None, :]  # [HQP, BLOCK * KVP] float32
    mine = (own[:, None] == head[None, :]) & valid[None, :]  # a query head sees its KV head's rows only
    scores = tl.where(mine, scores, float("-inf"))
    m_new = tl.maximum(m, tl.max(scores, axis=1))  # finite: every block has a valid token
    p = tl.exp(scores - m_new[:, None])
    alpha = tl.exp(m - m_new)  # rescales what was summed under the old max (0 at the start)
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot((p * vs[None, :]).to(tl.float16), v)
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
    stride_sslot,
    stride_ob,
    stride_oh,
    NUM_KV: tl.constexpr,
    KVP: tl.constexpr,
    PAGE: tl.constexpr,
    G: tl.constexpr,
    HQ: tl.constexpr,
    HQP: tl.constexpr,
    D: tl.constexpr,
    S: tl.constexpr,
    BLOCK: tl.constexpr,
    STAGES: tl.constexpr,
    PIPELINE: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    b = tl.program_id(0)
    s = tl.program_id(1)
    offs_h = tl.arange(0, HQP)
    offs_d = tl.arange(0, D)
    if USE_PDL:  # every input may be the previous kernel's output (the newest K/V: qk_rope_store)
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    kv_len = tl.load(lens_ptr + b)
    first_page = tl.load(indptr_ptr + b)
    # Each split's share, rounded up to whole blocks: every block then starts on a page boundary
    # (blocks are a page long at the default sizes), and a request's last splits may get no keys.
    chunk = tl.cdiv(tl.cdiv(kv_len, S), BLOCK) * BLOCK
    start = s * chunk
    end = tl.minimum(start + chunk, kv_len)
    keep = offs_h < HQ
    own = tl.minimum(offs_h // G, NUM_KV - 1)  # each query head's KV head (padding rows borrow the last)
    q_rows = q_ptr + b * stride_qb + offs_h[:, None] * stride_qh + offs_d[None, :]
    q = tl.load(q_rows, mask=keep[:, None], other=0.0).to(tl.float16)  # the softmax scale goes on the scores
    m = tl.full([HQP], float("-inf"), tl.float32)
    l = tl.zeros([HQP], tl.float32)
    acc = tl.zeros([HQP, D], tl.float32)
    if PIPELINE:
        for t0 in tl.range(start, end, BLOCK, num_stages=STAGES):
            m, l, acc = _fold_block(
                q, m, l, acc, own, k_ptr, v_ptr, ks_ptr, vs_ptr, indices_ptr, first_page, t0, end,
                stride_kslot, stride_sslot, sm_scale, NUM_KV, KVP, PAGE, BLOCK, D,
            )  # fmt: skip
    else:
        t0 = start
        while t0 < end:
            m, l, acc = _fold_block(
                q, m, l, acc, own, k_ptr, v_ptr, ks_ptr, vs_ptr, indices_ptr, first_page, t0, end,
                stride_kslot, stride_sslot, sm_scale, NUM_KV, KVP, PAGE, BLOCK, D,
            )  # fmt: skip
            t0 += BLOCK
    o_rows = out_ptr + b * stride_ob + offs_h[:, None] * stride_oh + offs_d[None, :]
    if S == 1:  # the whole context in this program: nothing to merge
        tl.store(o_rows, (acc / l[:, None]).to(out_ptr.dtype.element_ty), mask=keep[:, None])
    else:
        part = (b * HQ + offs_h) * S + s  # [request, q head, split]
        tl.store(acc_ptr + part[:, None] * D + offs_d[None, :], acc, mask=keep[:, None])
        tl.store(ml_ptr + part * 2, m, mask=keep)
        tl.store(ml_ptr + part * 2 + 1, l, mask=keep)
        tl.debug_barrier()  # every thread's partial is written before the counter says so
        done = tl.atomic_add(count_ptr + b, 1, sem="acq_rel")
        if done == S - 1:  # the last split of request b merges, as in decode_attention.py
            rows = (b * HQ + offs_h)[:, None] * S + tl.arange(0, S)[None, :]  # [HQP, S]
            ms = tl.load(ml_ptr + rows * 2, mask=keep[:, None], other=0.0, cache_modifier=".cg")
            ls = tl.load(ml_ptr + rows * 2 + 1, mask=keep[:, None], other=1.0, cache_modifier=".cg")
            weight = tl.exp(ms - tl.max(ms, axis=1)[:, None])  # 0 for an empty split (m = -inf)
            accs = tl.load(
                acc_ptr + rows[:, :, None] * D + offs_d[None, None, :], mask=keep[:, None, None], other=0.0,
                cache_modifier=".cg",
            )  # fmt: skip
            out = tl.sum(accs * weight[:, :, None], axis=1) / tl.sum(ls * weight, axis=1)[:, None]
            tl.store(o_rows, out.to(out_ptr.dtype.element_ty), mask=keep[:, None])
            tl.store(count_ptr + b, 0)  # ready for the next layer and the next replay


def num_splits(bs: int) -> int:
    """Splits per request: a power of two, about `TARGET_PROGRAMS` programs in all, 1..32: at
    batch 256, 8 programs share a request's context, at batch 64 and below 32 do."""
    return max(1, min(MAX_SPLITS, triton.next_power_of_2(max(1, TARGET_PROGRAMS // bs))))


def block_tokens(num_kv_heads: int) -> int:
    """Tokens per block: `ROWS` (token, KV head) rows, whatever the number of KV heads."""
    return max(1, ROWS // triton.next_power_of_2(num_kv_heads))


def supports(num_qo_heads: int, num_kv_heads: int, head_dim: int) -> bool:
    return (
        num_qo_heads % num_kv_heads == 0
        and num_qo_heads <= 64
        and triton.next_power_of_2(num_kv_heads) <= ROWS
        and head_dim & (head_dim - 1) == 0
        and 16 <= head_dim <= 256
    )


class SplitKVDecodeFP8(SplitKVDecode):
    """`SplitKVDecode`'s buffers and page lists (`plan`, `use_buffers`), over FP8 pages, with
    partial results per (request, query head, split)."""

    def __init__(self, bs: int, *args, splits: int = 0, block: int = 0, stages: int = STAGES, **kw) -> None:
        """`splits`, `block` (tokens) and `stages` 0 or left out: the defaults above; there to time others."""
        # The base class's buffers fit this kernel: partials per (request, query head, split), and
        # merge counters (one per request and KV head there; this kernel uses the first bs).
        super().__init__(bs, *args, splits=splits or num_splits(bs), **kw)
        self.block = block or block_tokens(self.hkv)
        self.stages = stages
        if self.splits == 1:  # nothing to merge: no partials
            self.acc = self.ml = self.count

    def run(self, q: torch.Tensor, kv: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """q [bs, Hq, D]; kv = the layer's (K, V, K scales, V scales): [slots, Hkv, D] e4m3 and
        [slots, Hkv] float32, the new tokens already in them -> [bs, Hq, D]."""
        k, v, ks, vs = kv
        assert k.stride(1) == self.d, "a slot's heads side by side: [slots, Hkv, D] contiguous"
        out = torch.empty((self.bs, self.hq, self.d), dtype=q.dtype, device=q.device)
        _decode_fp8_kernel[(self.bs, self.splits)](
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
            ks.stride(0),
            out.stride(0),
            out.stride(1),
            NUM_KV=self.hkv,
            KVP=triton.next_power_of_2(self.hkv),
            PAGE=self.page_size,
            G=self.hq // self.hkv,
            HQ=self.hq,
            HQP=max(MIN_Q_ROWS, triton.next_power_of_2(self.hq)),
            D=self.d,
            S=self.splits,
            BLOCK=self.block,
            STAGES=self.stages,
            PIPELINE=not env.get().triton_interpret,
            num_warps=NUM_WARPS,
            **pdl.launch_options(q.device),
        )
        return out
