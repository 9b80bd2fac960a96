"""Paged decode attention for the CUDA graphs of a few requests: split the KV, then merge (CUDA only).

Where this sits on the request path: `FlashInferBackend.graph_wrapper(bs)` hands out a
`SplitKVDecode` instead of FlashInfer's decode wrapper for the captured decode graphs of at most
`MAX_BS` requests; every attention layer of such a step runs its `run()`. Same pool, same page
lists, same interface (`plan` on the host before a replay, `run(q, (k_pages, v_pages))` per layer).

Why: at batch 1 a layer's attention reads little (512 keys x 8 KV heads: 2 MB), but FlashInfer's
graph-mode decode is two kernels and ~10 us per layer on the H200, ~40% of the whole layer once the
matmuls were fast, and its `plan()` runs on the host before every step. Here:

1. `_split_kernel`, one program per (request, KV head, split): its share of the request's keys
   (the split `s` of `S` takes keys [s * c, (s + 1) * c), c = ceil(len / S)), read through the page
   list, against the G query heads that share this KV head (grouped-query attention). It keeps
   the running max m, the softmax sum l and the unnormalised output acc (online softmax, as in
   flash-decoding) and writes them out in float32.
2. `_merge_kernel`, one program per (request, query head): out = sum_s e^(m_s - M) acc_s /
   sum_s e^(m_s - M) l_s with M = max_s m_s. A split with no keys has m = -inf and weighs 0.

S is picked per batch size so that batch x KV heads x S is about 512 programs: the SMs are busy
even at batch 1, and each split is short (at batch 1 and 512 keys, 16 keys per split). No tensor
cores: one query row per head is a dot product per key.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl

MAX_BS = 4  # graphs of up to this many requests use this kernel; larger batches: FlashInfer
BLOCK = 16  # keys per loop step of a split (16 beat 32 and 64 at every size measured)


@triton.jit
def _split_kernel(q_ptr, k_ptr, v_ptr, indices_ptr, indptr_ptr, lens_ptr, acc_ptr, ml_ptr, sm_scale,
                  stride_qb, stride_qh, stride_kslot, stride_kh, PAGE: tl.constexpr, G: tl.constexpr,
                  D: tl.constexpr, S: tl.constexpr, BLOCK: tl.constexpr, USE_PDL: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    s = tl.program_id(2)
    if USE_PDL:  # q and the new token's K/V come from the kernels just before: wait for them
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    kv_len = tl.load(lens_ptr + b)
    first_page = tl.load(indptr_ptr + b)
    chunk = tl.cdiv(kv_len, S)
    start = s * chunk
    end = tl.minimum(start + chunk, kv_len)
    offs_g = tl.arange(0, G)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + b * stride_qb + (h * G + offs_g)[:, None] * stride_qh + offs_d[None, :]).to(tl.float32)
    q = q * sm_scale
    m = tl.full([G], float("-inf"), tl.float32)
    l = tl.zeros([G], tl.float32)
    acc = tl.zeros([G, D], tl.float32)
    t0 = start
    while t0 < end:  # a while, not a range: Triton's interpreter cannot take runtime range bounds
        t = t0 + tl.arange(0, BLOCK)
        valid = t < end
        page = tl.load(indices_ptr + first_page + t // PAGE, mask=valid, other=0)
        slot = page.to(tl.int64) * PAGE + t % PAGE  # the key's row in the pool
        kv_off = slot[:, None] * stride_kslot + h * stride_kh + offs_d[None, :]
        k = tl.load(k_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)  # [BLOCK, D]
        v = tl.load(v_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)
        scores = tl.sum(q[:, None, :] * k[None, :, :], axis=2)  # [G, BLOCK]
        scores = tl.where(valid[None, :], scores, float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, axis=1))  # finite: the block has a valid key
        p = tl.exp(scores - m_new[:, None])
        alpha = tl.exp(m - m_new)  # rescales what was summed under the old max (0 at the start)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        l = l * alpha + tl.sum(p, axis=1)
        m = m_new
        t0 += BLOCK
    row = (b * (tl.num_programs(1) * G) + h * G + offs_g) * S + s  # [request, q head, split]
    tl.store(acc_ptr + row[:, None] * D + offs_d[None, :], acc)
    tl.store(ml_ptr + row * 2, m)
    tl.store(ml_ptr + row * 2 + 1, l)


@triton.jit
def _merge_kernel(acc_ptr, ml_ptr, out_ptr, stride_ob, stride_oh, D: tl.constexpr, S: tl.constexpr,
                  USE_PDL: tl.constexpr):
    b = tl.program_id(0)
    hq = tl.program_id(1)
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    row = (b * tl.num_programs(1) + hq) * S + tl.arange(0, S)
    m = tl.load(ml_ptr + row * 2)
    l = tl.load(ml_ptr + row * 2 + 1)
    weight = tl.exp(m - tl.max(m, axis=0))  # 0 for an empty split (m = -inf)
    acc = tl.load(acc_ptr + row[:, None] * D + tl.arange(0, D)[None, :])  # [S, D]
    out = tl.sum(acc * weight[:, None], axis=0) / tl.sum(l * weight, axis=0)
    tl.store(out_ptr + b * stride_ob + hq * stride_oh + tl.arange(0, D), out.to(out_ptr.dtype.element_ty))


def num_splits(bs: int, num_kv_heads: int) -> int:
    """Splits per (request, KV head): a power of two, about 512 programs in all, 1..32.

    Measured on an H200 (scripts/gpu_kernel_bench.py small_attn, Qwen3-0.6B heads, 512 keys): at
    batch 1 32 splits of 16 keys per step took 6.3 us per layer, 16 splits 8.0, FlashInfer 10.0;
    at batch 4 16 splits 11.2, 32 splits 11.8, FlashInfer 12.0.
    """
    return max(1, min(32, triton.next_power_of_2(max(1, 512 // (bs * num_kv_heads)))))


def supports(num_qo_heads: int, num_kv_heads: int, head_dim: int) -> bool:
    group = num_qo_heads // num_kv_heads
    return (num_qo_heads % num_kv_heads == 0 and group & (group - 1) == 0
            and head_dim & (head_dim - 1) == 0 and head_dim <= 256)


class SplitKVDecode:
    """A decode 'wrapper' for one captured batch size: fixed buffers, `plan()` fills them."""

    def __init__(self, bs: int, num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int,
                 scale: float, indices: torch.Tensor, splits: int = 0, block: int = BLOCK) -> None:
        """`splits` 0: `num_splits(bs, num_kv_heads)`; `splits` and `block` are there to tune them."""
        dev = indices.device
        self.bs, self.hq, self.hkv, self.d, self.page_size, self.scale = (
            bs, num_qo_heads, num_kv_heads, head_dim, page_size, scale)
        self.splits = splits or num_splits(bs, num_kv_heads)
        self.block = block
        self.indices = indices  # page ids of all requests, back to back (shared by every size)
        self.indptr = torch.zeros(bs + 1, dtype=torch.int32, device=dev)
        self.lens = torch.ones(bs, dtype=torch.int32, device=dev)
        self.acc = torch.empty(bs * num_qo_heads * self.splits * head_dim, dtype=torch.float32, device=dev)
        self.ml = torch.empty(bs * num_qo_heads * self.splits * 2, dtype=torch.float32, device=dev)

    def plan(self, indptr: torch.Tensor, indices: torch.Tensor, kv_lens: torch.Tensor) -> None:
        """Host tensors indptr [bs + 1], kv_lens [bs] (pinned) and the GPU page list: copied into
        the fixed buffers, in stream order (a replay still running keeps its own batch's values)."""
        self.indptr.copy_(indptr, non_blocking=True)
        self.lens.copy_(kv_lens, non_blocking=True)
        self.indices[: indices.numel()].copy_(indices, non_blocking=True)

    def run(self, q: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """q [bs, Hq, D]; kv = the layer's pages ([pages, page_size, Hkv, D] each) -> [bs, Hq, D]."""
        k, v = (x.view(-1, self.hkv, self.d) for x in kv)  # one row per token slot
        opts = pdl.launch_options(q.device)
        _split_kernel[(self.bs, self.hkv, self.splits)](
            q, k, v, self.indices, self.indptr, self.lens, self.acc, self.ml, self.scale, q.stride(0), q.stride(1),
            k.stride(0), k.stride(1), PAGE=self.page_size, G=self.hq // self.hkv, D=self.d, S=self.splits,
            BLOCK=self.block, num_warps=4, **opts,
        )
        out = torch.empty_like(q)
        _merge_kernel[(self.bs, self.hq)](self.acc, self.ml, out, out.stride(0), out.stride(1), D=self.d,
                                          S=self.splits, num_warps=4, **opts)
        return out
