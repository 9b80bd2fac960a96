"""Paged decode attention for a few requests: split-KV and merge in one kernel (CUDA only).

Where this sits on the request path: the `triton` attention backend (`attention/triton_backend.py`)
runs every attention layer of a decode batch of at most `MAX_BS` requests through a
`SplitKVDecode`, once the new K/V are in the pool (`qk_rope_store.py` or the backend wrote them):
in the captured decode graphs of those sizes, whose page lists the graph runner sends in its one
copy (`use_buffers`), and eagerly (`plan()`).

Why: at batch 1 a layer's attention reads little (512 keys x 8 KV heads: 2 MB), so what costs is
the number of kernels and how well one kernel keeps the SMs busy. FlashInfer's graph-mode decode is
two kernels per layer and a `plan()` on the host before every step; this is one kernel and no
host-side plan. One program per (request, KV head, split):

1. q of the G query heads that share this KV head (grouped-query attention), and the split's
   share of the request's cached keys (split `s` of `S` takes keys [s * c, (s + 1) * c),
   c = ceil(n / S)), read through the page list in blocks of 16 keys, the next block's loads
   issued before this block's arithmetic. It keeps the running max m, the softmax sum l and the
   unnormalised output acc (online softmax, as in flash-decoding).
2. Each split writes (m, l, acc) in float32 and counts itself done with an atomic add; the last of
   a (request, KV head) to finish merges: out = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s,
   M = max_s m_s. A split with no keys has m = -inf and weighs 0.

At `EARLY_KV_MIN_BS` requests and more the kernel reads every cached key but the newest before
`gdc_wait()` (under PDL, `pdl.py`: the kernel just before, `qk_rope_store`, writes only the newest),
and the newest after it, in the last split. Below that size it waits first, then reads all keys:
there the early reads are slower.

S is picked per batch size so that batch x KV heads x S is about 512 programs: the SMs are busy
even at batch 1, and each split is short (at batch 1 and 512 keys, 16 keys per split). No tensor
cores: one query row per head is a dot product per key.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl

MAX_BS = 4  # decode batches of up to this many requests use this kernel; larger ones: FlashInfer
BLOCK = 16  # keys per loop step of a split (faster than 32 and 64 on the H200)
NUM_WARPS = 4  # faster than 2 and 8 at bs 1 on the H200
EARLY_KV_MIN_BS = 4  # from this batch size on, cached keys are read before gdc_wait (see above)


@triton.jit
def _load_block(
    k_ptr,
    v_ptr,
    indices_ptr,
    first_page,
    t0,
    end,
    h,
    stride_kslot,
    stride_kh,
    PAGE: tl.constexpr,
    BLOCK: tl.constexpr,
    HALF: tl.constexpr,
):
    """Keys t0 .. t0 + BLOCK - 1 of one request (those < end), KV head h, through its page list:
    -> (valid [BLOCK], K's two halves [BLOCK, HALF] each, V [BLOCK, 2 HALF]), in the pool's dtype."""
    t = t0 + tl.arange(0, BLOCK)
    valid = t < end
    page = tl.load(indices_ptr + first_page + t // PAGE, mask=valid, other=0)
    slot = page.to(tl.int64) * PAGE + t % PAGE  # the key's row in the pool
    base = slot[:, None] * stride_kslot + h * stride_kh
    offs_h = tl.arange(0, HALF)
    k1 = tl.load(k_ptr + base + offs_h[None, :], mask=valid[:, None], other=0.0)
    k2 = tl.load(k_ptr + base + HALF + offs_h[None, :], mask=valid[:, None], other=0.0)
    v = tl.load(v_ptr + base + tl.arange(0, 2 * HALF)[None, :], mask=valid[:, None], other=0.0)
    return valid, k1, k2, v


@triton.jit
def _online_update(m, l, acc, scores, v):
    """Fold keys with `scores` [G, N] and values v [N, D] into the running (m, l, acc) (flash-decoding)."""
    m_new = tl.maximum(m, tl.max(scores, axis=1))  # finite: every block has a valid key
    p = tl.exp(scores - m_new[:, None])
    alpha = tl.exp(m - m_new)  # rescales what was summed under the old max (0 at the start)
    acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
    return m_new, l * alpha + tl.sum(p, axis=1), acc


@triton.jit
def _decode_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
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
    stride_ob,
    stride_oh,
    NUM_KV: tl.constexpr,
    PAGE: tl.constexpr,
    G: tl.constexpr,
    D: tl.constexpr,
    S: tl.constexpr,
    BLOCK: tl.constexpr,
    EARLY_KV: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    s = tl.program_id(2)
    HALF: tl.constexpr = D // 2
    offs_g = tl.arange(0, G)
    offs_h = tl.arange(0, HALF)
    offs_d = tl.arange(0, D)
    # With EARLY_KV, before gdc_wait, while the kernels before this one may still run: the page
    # list and lengths were copied in before the graph started, and every cached key but the
    # newest was written by earlier steps, so none of it is a previous kernel's output. The newest
    # key (this step's token, position kv_len - 1) is read after the wait, from the pool, where the
    # kernel just before wrote it.
    if USE_PDL and not EARLY_KV:  # wait first, then read all keys
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    kv_len = tl.load(lens_ptr + b)
    first_page = tl.load(indptr_ptr + b)
    n_pool = kv_len - 1 if EARLY_KV else kv_len  # keys read in the loop (with EARLY_KV, not the newest)
    chunk = tl.cdiv(n_pool, S)
    start = s * chunk
    end = tl.minimum(start + chunk, n_pool)
    valid, k1, k2, v = _load_block(
        k_ptr, v_ptr, indices_ptr, first_page, start, end, h, stride_kslot, stride_kh, PAGE, BLOCK, HALF
    )
    if EARLY_KV:  # where the newest key is (its page is known before the wait)
        newest = kv_len - 1
        newest_page = tl.load(indices_ptr + first_page + newest // PAGE).to(tl.int64)
        newest_src = (newest_page * PAGE + newest % PAGE) * stride_kslot + h * stride_kh
        if USE_PDL:
            tl.extra.cuda.gdc_wait()
            tl.extra.cuda.gdc_launch_dependents()
    # The G query heads that share KV head h (grouped-query attention), as two halves.
    q_row = q_ptr + b * stride_qb + (h * G + offs_g)[:, None] * stride_qh
    q1 = tl.load(q_row + offs_h[None, :]).to(tl.float32)
    q2 = tl.load(q_row + HALF + offs_h[None, :]).to(tl.float32)
    q1 = q1 * sm_scale
    q2 = q2 * sm_scale
    m = tl.full([G], float("-inf"), tl.float32)
    l = tl.zeros([G], tl.float32)
    acc = tl.zeros([G, D], tl.float32)
    t0 = start
    while t0 < end:  # a while, not a range: Triton's interpreter cannot take runtime range bounds
        # The next block's loads are issued before this block's arithmetic (software pipelining).
        valid_n, k1_n, k2_n, v_n = _load_block(
            k_ptr, v_ptr, indices_ptr, first_page, t0 + BLOCK, end, h, stride_kslot, stride_kh, PAGE, BLOCK, HALF
        )
        scores = tl.sum(q1[:, None, :] * k1.to(tl.float32)[None, :, :], axis=2) + tl.sum(
            q2[:, None, :] * k2.to(tl.float32)[None, :, :], axis=2
        )  # [G, BLOCK]
        scores = tl.where(valid[None, :], scores, float("-inf"))
        m, l, acc = _online_update(m, l, acc, scores, v.to(tl.float32))
        valid, k1, k2, v = valid_n, k1_n, k2_n, v_n
        t0 += BLOCK
    if EARLY_KV:
        if s == S - 1:  # the last split (the fewest keys from the loop) also takes the newest key
            # ".cg": from L2, where the kernel before wrote it
            k1_new = tl.load(k_ptr + newest_src + offs_h, cache_modifier=".cg")[None, :]
            k2_new = tl.load(k_ptr + newest_src + HALF + offs_h, cache_modifier=".cg")[None, :]
            v_new = tl.load(v_ptr + newest_src + offs_d, cache_modifier=".cg")[None, :]
            score = tl.sum(q1 * k1_new.to(tl.float32), axis=1) + tl.sum(q2 * k2_new.to(tl.float32), axis=1)
            m, l, acc = _online_update(m, l, acc, score[:, None], v_new.to(tl.float32))
    _store_and_merge(acc, m, l, acc_ptr, ml_ptr, count_ptr, out_ptr, b, h, s, stride_ob, stride_oh, NUM_KV, G, D, S)


@triton.jit
def _store_and_merge(
    acc,
    m,
    l,
    acc_ptr,
    ml_ptr,
    count_ptr,
    out_ptr,
    b,
    h,
    s,
    stride_ob,
    stride_oh,
    NUM_KV: tl.constexpr,
    G: tl.constexpr,
    D: tl.constexpr,
    S: tl.constexpr,
):
    """Write split s's partial result of (request b, KV head h); the split that finishes last
    merges all S of them into the output."""
    NUM_Q: tl.constexpr = NUM_KV * G
    offs_g = tl.arange(0, G)
    offs_d = tl.arange(0, D)
    part = (b * NUM_Q + h * G + offs_g) * S + s  # [request, q head, split]
    tl.store(acc_ptr + part[:, None] * D + offs_d[None, :], acc)
    tl.store(ml_ptr + part * 2, m)
    tl.store(ml_ptr + part * 2 + 1, l)
    tl.debug_barrier()  # every thread's partial is written before the counter says so
    done = tl.atomic_add(count_ptr + b * NUM_KV + h, 1, sem="acq_rel")
    if done == S - 1:
        rows = (b * NUM_Q + h * G + offs_g)[:, None] * S + tl.arange(0, S)[None, :]  # [G, S]
        # ".cg": read from L2, where the other programs' partials are, never a stale L1 line.
        ms = tl.load(ml_ptr + rows * 2, cache_modifier=".cg")
        ls = tl.load(ml_ptr + rows * 2 + 1, cache_modifier=".cg")
        weight = tl.exp(ms - tl.max(ms, axis=1)[:, None])  # 0 for an empty split (m = -inf)
        accs = tl.load(acc_ptr + rows[:, :, None] * D + offs_d[None, None, :], cache_modifier=".cg")  # [G, S, D]
        out = tl.sum(accs * weight[:, :, None], axis=1) / tl.sum(ls * weight, axis=1)[:, None]
        o_row = out_ptr + b * stride_ob + (h * G + offs_g)[:, None] * stride_oh
        tl.store(o_row + offs_d[None, :], out.to(out_ptr.dtype.element_ty))
        tl.store(count_ptr + b * NUM_KV + h, 0)  # ready for the next layer and the next replay


def num_splits(bs: int, num_kv_heads: int) -> int:
    """Splits per (request, KV head): a power of two, about 512 programs in all, 1..32.

    Enough programs to fill the SMs at batch 1, few enough that each split still reads a block of
    keys per step (`scripts/maintainer/gpu_kernel_bench.py small_attn` times other choices).
    """
    return max(1, min(32, triton.next_power_of_2(max(1, 512 // (bs * num_kv_heads)))))


def supports(num_qo_heads: int, num_kv_heads: int, head_dim: int) -> bool:
    group = num_qo_heads // num_kv_heads
    return (
        num_qo_heads % num_kv_heads == 0
        and group & (group - 1) == 0
        and head_dim & (head_dim - 1) == 0
        and head_dim <= 256
    )


class SplitKVDecode:
    """The kernel for one batch size: fixed buffers, which `plan()` fills or `use_buffers` replaces."""

    def __init__(
        self,
        bs: int,
        num_qo_heads: int,
        num_kv_heads: int,
        head_dim: int,
        page_size: int,
        scale: float,
        indices: torch.Tensor,
        splits: int = 0,
        block: int = BLOCK,
    ) -> None:
        """`splits` 0: `num_splits(bs, num_kv_heads)`; `splits` and `block` are there to time others."""
        dev = indices.device
        self.bs, self.hq, self.hkv, self.d, self.page_size, self.scale = (
            bs,
            num_qo_heads,
            num_kv_heads,
            head_dim,
            page_size,
            scale,
        )
        self.splits = splits or num_splits(bs, num_kv_heads)
        self.block = block
        self.early_kv = bs >= EARLY_KV_MIN_BS
        self.indices = indices  # page ids of all requests, back to back (shared by every size)
        self.indptr = torch.zeros(bs + 1, dtype=torch.int32, device=dev)
        self.lens = torch.ones(bs, dtype=torch.int32, device=dev)
        self.acc = torch.empty(bs * num_qo_heads * self.splits * head_dim, dtype=torch.float32, device=dev)
        self.ml = torch.empty(bs * num_qo_heads * self.splits * 2, dtype=torch.float32, device=dev)
        # Splits of each (request, KV head) done so far; the last one merges and sets it back to 0.
        self.count = torch.zeros(bs * num_kv_heads, dtype=torch.int32, device=dev)

    def plan(self, indptr: torch.Tensor, indices: torch.Tensor, kv_lens: torch.Tensor) -> None:
        """Host tensors indptr [bs + 1], kv_lens [bs] (pinned) and the GPU page list: copied into
        the fixed buffers, in stream order (a replay still running keeps its own batch's values)."""
        self.indptr.copy_(indptr, non_blocking=True)
        self.lens.copy_(kv_lens, non_blocking=True)
        self.indices[: indices.numel()].copy_(indices, non_blocking=True)

    def use_buffers(self, indptr: torch.Tensor, indices: torch.Tensor, lens: torch.Tensor) -> None:
        """Read the page lists from these device buffers (any integer dtype) instead of our own;
        the CUDA-graph runner fills them itself, in one copy with the step's other inputs
        (`attention/graph_inputs.py`), and then `plan()` is not called."""
        self.indptr, self.indices, self.lens = indptr, indices, lens

    def run(self, q: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """q [bs, Hq, D] (normed, rotated); kv = the layer's pages ([pages, page_size, Hkv, D]
        each), the new tokens' K/V already in them -> [bs, Hq, D]."""
        k, v = (x.view(-1, self.hkv, self.d) for x in kv)  # one row per token slot
        return self._launch(q, k, v)

    def _launch(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = torch.empty((self.bs, self.hq, self.d), dtype=q.dtype, device=q.device)
        _decode_kernel[(self.bs, self.hkv, self.splits)](
            q,
            k,
            v,
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
            out.stride(0),
            out.stride(1),
            NUM_KV=self.hkv,
            PAGE=self.page_size,
            G=self.hq // self.hkv,
            D=self.d,
            S=self.splits,
            BLOCK=self.block,
            EARLY_KV=self.early_kv,
            num_warps=NUM_WARPS,
            **pdl.launch_options(q.device),
        )
        return out
