"""One-off probe (docs/benchmarks.md, "FP8 decode on CUDA cores"): an FP8 decode kernel on CUDA cores
(no tl.dot), timed beside the tree's by exp_run.py.

Layout per block: [KVP heads, BLOCK tokens, D]; each query head g of a KV head is its own
elementwise product and reduction, so nothing is computed for another head's rows.
"""

from __future__ import annotations

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _step(q0, q1, m0, m1, l0, l1, a0, a1, t0, end, first_page, indices_ptr, k_ptr, v_ptr, ks_ptr, vs_ptr,
          stride_kslot, stride_sslot, NUM_KV: tl.constexpr, KVP: tl.constexpr, PAGE: tl.constexpr,
          D: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    hh = tl.arange(0, KVP)[:, None, None]
    dd = tl.arange(0, D)[None, None, :]
    h2 = tl.arange(0, KVP)[:, None]
    hok = hh < NUM_KV
    t = t0 + tl.arange(0, BLOCK)
    vt = t < end
    page = tl.load(indices_ptr + first_page + t // PAGE, mask=vt, other=0)
    slot = page.to(tl.int64) * PAGE + t % PAGE
    off = slot[None, :, None] * stride_kslot + hh * D + dd
    valid = vt[None, :, None] & hok
    k = tl.load(k_ptr + off, mask=valid, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + off, mask=valid, other=0.0).to(tl.float32)
    v2 = vt[None, :] & (h2 < NUM_KV)
    ks = tl.load(ks_ptr + slot[None, :] * stride_sslot + h2, mask=v2, other=0.0)
    vs = tl.load(vs_ptr + slot[None, :] * stride_sslot + h2, mask=v2, other=0.0)
    s0 = tl.where(v2, tl.sum(k * q0, axis=2) * ks, float("-inf"))  # [KVP, BLOCK]
    s1 = tl.where(v2, tl.sum(k * q1, axis=2) * ks, float("-inf"))
    n0 = tl.maximum(m0, tl.max(s0, axis=1))
    n1 = tl.maximum(m1, tl.max(s1, axis=1))
    n0 = tl.where(n0 == float("-inf"), 0.0, n0)  # a padding head has no valid row
    n1 = tl.where(n1 == float("-inf"), 0.0, n1)
    p0 = tl.exp(s0 - n0[:, None])
    p1 = tl.exp(s1 - n1[:, None])
    al0 = tl.exp(m0 - n0)
    al1 = tl.exp(m1 - n1)
    l0 = l0 * al0 + tl.sum(p0, axis=1)
    l1 = l1 * al1 + tl.sum(p1, axis=1)
    a0 = a0 * al0[:, None] + tl.sum((p0 * vs)[:, :, None] * v, axis=1)
    a1 = a1 * al1[:, None] + tl.sum((p1 * vs)[:, :, None] * v, axis=1)
    return n0, n1, l0, l1, a0, a1


@triton.jit
def _cc_kernel(
    q_ptr, k_ptr, v_ptr, ks_ptr, vs_ptr, indices_ptr, indptr_ptr, lens_ptr, acc_ptr, ml_ptr, count_ptr, out_ptr,
    sm_scale, stride_qb, stride_qh, stride_kslot, stride_sslot, stride_ob, stride_oh,
    NUM_KV: tl.constexpr, KVP: tl.constexpr, PAGE: tl.constexpr, HQ: tl.constexpr, HQP: tl.constexpr,
    D: tl.constexpr, S: tl.constexpr, BLOCK: tl.constexpr, STAGES: tl.constexpr, PIPELINE: tl.constexpr,
):  # fmt: skip
    # G = 2 query heads per KV head, unrolled (the benchmark's shape).
    b = tl.program_id(0)
    s = tl.program_id(1)
    hh = tl.arange(0, KVP)[:, None, None]
    tt = tl.arange(0, BLOCK)[None, :, None]
    dd = tl.arange(0, D)[None, None, :]
    kv_len = tl.load(lens_ptr + b)
    first_page = tl.load(indptr_ptr + b)
    chunk = tl.cdiv(tl.cdiv(kv_len, S), BLOCK) * BLOCK
    start = s * chunk
    end = tl.minimum(start + chunk, kv_len)
    hok = hh < NUM_KV
    qbase = q_ptr + b * stride_qb + dd + tt * 0
    q0 = tl.load(qbase + (hh * 2) * stride_qh, mask=hok, other=0.0).to(tl.float32) * sm_scale
    q1 = tl.load(qbase + (hh * 2 + 1) * stride_qh, mask=hok, other=0.0).to(tl.float32) * sm_scale
    m0 = tl.full([KVP], float("-inf"), tl.float32)
    m1 = tl.full([KVP], float("-inf"), tl.float32)
    l0 = tl.zeros([KVP], tl.float32)
    l1 = tl.zeros([KVP], tl.float32)
    a0 = tl.zeros([KVP, D], tl.float32)
    a1 = tl.zeros([KVP, D], tl.float32)
    if PIPELINE:
        for t0 in tl.range(start, end, BLOCK, num_stages=STAGES):
            m0, m1, l0, l1, a0, a1 = _step(
                q0, q1, m0, m1, l0, l1, a0, a1, t0, end, first_page, indices_ptr, k_ptr, v_ptr, ks_ptr, vs_ptr,
                stride_kslot, stride_sslot, NUM_KV, KVP, PAGE, D, BLOCK,
            )  # fmt: skip
    else:
        t0 = start
        while t0 < end:
            m0, m1, l0, l1, a0, a1 = _step(
                q0, q1, m0, m1, l0, l1, a0, a1, t0, end, first_page, indices_ptr, k_ptr, v_ptr, ks_ptr, vs_ptr,
                stride_kslot, stride_sslot, NUM_KV, KVP, PAGE, D, BLOCK,
            )  # fmt: skip
            t0 += BLOCK
    h1 = tl.arange(0, KVP)
    dcol = tl.arange(0, D)[None, :]
    hk = h1 < NUM_KV
    if S == 1:
        o = out_ptr + b * stride_ob + dcol
        tl.store(o + (h1 * 2)[:, None] * stride_oh, (a0 / l0[:, None]).to(out_ptr.dtype.element_ty), mask=hk[:, None])
        tl.store(
            o + (h1 * 2 + 1)[:, None] * stride_oh, (a1 / l1[:, None]).to(out_ptr.dtype.element_ty), mask=hk[:, None]
        )
    else:
        p0i = (b * HQ + h1 * 2) * S + s
        p1i = (b * HQ + h1 * 2 + 1) * S + s
        tl.store(acc_ptr + p0i[:, None] * D + dcol, a0, mask=hk[:, None])
        tl.store(acc_ptr + p1i[:, None] * D + dcol, a1, mask=hk[:, None])
        tl.store(ml_ptr + p0i * 2, m0, mask=hk)
        tl.store(ml_ptr + p0i * 2 + 1, l0, mask=hk)
        tl.store(ml_ptr + p1i * 2, m1, mask=hk)
        tl.store(ml_ptr + p1i * 2 + 1, l1, mask=hk)
        tl.debug_barrier()
        done = tl.atomic_add(count_ptr + b, 1, sem="acq_rel")
        if done == S - 1:
            offs_h = tl.arange(0, HQP)
            keep = offs_h < HQ
            rows = (b * HQ + offs_h)[:, None] * S + tl.arange(0, S)[None, :]
            ms = tl.load(ml_ptr + rows * 2, mask=keep[:, None], other=0.0, cache_modifier=".cg")
            ls = tl.load(ml_ptr + rows * 2 + 1, mask=keep[:, None], other=0.0, cache_modifier=".cg")
            # an empty split has m = -inf, l = 0 (here m was clamped to 0 with l = 0: weight * 0)
            weight = tl.exp(ms - tl.max(ms, axis=1)[:, None])
            accs = tl.load(
                acc_ptr + rows[:, :, None] * D + tl.arange(0, D)[None, None, :], mask=keep[:, None, None], other=0.0,
                cache_modifier=".cg",
            )  # fmt: skip
            out = tl.sum(accs * weight[:, :, None], axis=1) / tl.sum(ls * weight, axis=1)[:, None]
            o_rows = out_ptr + b * stride_ob + offs_h[:, None] * stride_oh + tl.arange(0, D)[None, :]
            tl.store(o_rows, out.to(out_ptr.dtype.element_ty), mask=keep[:, None])
            tl.store(count_ptr + b, 0)


class CC:
    def __init__(self, base, block: int, warps: int, stages: int) -> None:
        self.k = base  # a SplitKVDecodeFP8 for its buffers and page lists
        self.block, self.warps, self.stages = block, warps, stages

    def run(self, q, kv):
        k, v, ks, vs = kv
        kb = self.k
        out = torch.empty((kb.bs, kb.hq, kb.d), dtype=q.dtype, device=q.device)
        assert kb.hq == 2 * kb.hkv
        _cc_kernel[(kb.bs, kb.splits)](
            q, k, v, ks, vs, kb.indices, kb.indptr, kb.lens, kb.acc, kb.ml, kb.count, out, kb.scale,
            q.stride(0), q.stride(1), k.stride(0), ks.stride(0), out.stride(0), out.stride(1),
            NUM_KV=kb.hkv, KVP=triton.next_power_of_2(kb.hkv), PAGE=kb.page_size, HQ=kb.hq,
            HQP=max(16, triton.next_power_of_2(kb.hq)), D=kb.d, S=kb.splits, BLOCK=self.block,
            STAGES=self.stages, PIPELINE=not os.environ.get('TRITON_INTERPRET'), num_warps=self.warps,
        )  # fmt: skip
        return out


if __name__ == "__main__":
    print(sys.argv)
