"""One-off driver: the CUDA-core FP8 decode kernel against the tree's and FlashInfer bf16."""

import importlib.util
import random
import time

import torch

from minisgl_edu.bench.graph_timer import graph_us
from minisgl_edu.kernels import decode_attention_fp8 as fp8k
from minisgl_edu.kvcache.pool import FP8, KVPool

spec = importlib.util.spec_from_file_location("exp", "scripts/maintainer/exp_fp8_cc.py")
exp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(exp)
BS, LO, HI = 256, 200, 2048
HQ, HKV, D, PAGE = 16, 8, 128, 16
dev = "cuda"


def best_us(fns):
    return min(graph_us(fns) for _ in range(3))


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


rng = random.Random(0)
lens = [rng.randint(LO, HI) for _ in range(BS)]
npages = [(n + PAGE - 1) // PAGE for n in lens]
tp = sum(npages)
g = torch.Generator(device=dev).manual_seed(0)
perm = torch.randperm(tp, device=dev, generator=g).to(torch.int32)
indptr = torch.tensor([0] + list(torch.tensor(npages).cumsum(0).tolist()), dtype=torch.int32)
last = torch.tensor([n - (p - 1) * PAGE for n, p in zip(lens, npages)], dtype=torch.int32)
q = torch.randn(BS, HQ, D, device=dev, dtype=torch.bfloat16, generator=g)
pool = KVPool(1, tp, PAGE, HKV, D, torch.bfloat16, dev, kv_dtype=FP8)
kp = torch.randn(tp + 1, PAGE, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
vp = torch.randn(tp + 1, PAGE, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
slots = kp.shape[0] * PAGE
for st in range(0, slots, 1 << 20):
    loc = torch.arange(st, min(st + (1 << 20), slots), device=dev)
    pool.store(0, loc, kp.view(-1, HKV, D)[loc], vp.view(-1, HKV, D)[loc])
tokens = sum(lens)
fp8_bytes = tokens * HKV * (D + 4) * 2
import flashinfer

w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
    torch.zeros(128 << 20, dtype=torch.uint8, device=dev), "NHD", use_tensor_cores=True
)
w.plan(
    indptr.to(dev),
    perm,
    last.to(dev),
    HQ,
    HKV,
    D,
    PAGE,
    q_data_type=torch.bfloat16,
    kv_data_type=torch.bfloat16,
    sm_scale=D**-0.5,
)
fi_us = best_us([lambda: w.run(q, (kp, vp))] * 4)
kv = (pool.k[0], pool.v[0], pool.k_scale[0], pool.v_scale[0])
idx = torch.zeros(tp, dtype=torch.int32, device=dev)


def mk(splits=0):
    k = fp8k.SplitKVDecodeFP8(BS, HQ, HKV, D, PAGE, D**-0.5, idx, splits=splits)
    k.plan(indptr.pin_memory(), perm, torch.tensor(lens, dtype=torch.int32).pin_memory())
    return k


tree = mk()
ref = tree.run(q, kv)
tree_us = best_us([lambda: tree.run(q, kv)] * 4)
rows = [f"FlashInfer bf16 {fi_us:.1f} us", f"tree fp8 {tree_us:.1f} us  {fi_us / tree_us:.3f}x"]
print(rows, flush=True)
res = []


def trial(block, warps, stages, splits):
    try:
        cc = exp.CC(mk(splits), block, warps, stages)
        out = cc.run(q, kv)
        err = rel(out, ref)
        us = best_us([lambda: cc.run(q, kv)] * 4)
    except Exception as e:
        print("fail", block, warps, stages, splits, repr(e)[:300], flush=True)
        return
    line = f"cc block {block} warps {warps} stages {stages} splits {splits}: {us:.1f} us {fi_us / us:.3f}x err {err:.1e} {fp8_bytes / us / 1e6:.2f} TB/s"
    print(line, flush=True)
    res.append((us, block, warps, stages, splits, line))


t0 = time.time()


def tree_trial(stages, splits, warps):
    try:
        fp8k.NUM_WARPS = warps
        k = fp8k.SplitKVDecodeFP8(BS, HQ, HKV, D, PAGE, D**-0.5, idx, splits=splits, stages=stages)
        k.plan(indptr.pin_memory(), perm, torch.tensor(lens, dtype=torch.int32).pin_memory())
        err = rel(k.run(q, kv), ref)
        us = best_us([lambda: k.run(q, kv)] * 4)
    except Exception as e:
        print("tree fail", stages, splits, warps, repr(e)[:300], flush=True)
        return
    finally:
        fp8k.NUM_WARPS = 4
    line = f"tree kernel stages {stages} splits {splits} warps {warps}: {us:.1f} us {fi_us / us:.3f}x err {err:.1e}"
    print(line, flush=True)
    res.append((us, 0, warps, stages, splits, line))


for st, sp, wa in ((1, 8, 4), (1, 16, 4), (1, 8, 8), (1, 4, 4)):
    tree_trial(st, sp, wa)
for block, warps in ((4, 1), (4, 2), (8, 1), (8, 2), (8, 4), (16, 2), (16, 4), (32, 4)):
    trial(block, warps, 1, 8)
    if time.time() - t0 > 250:
        break
cc = sorted(r for r in res if r[1])
if cc:
    _, b, wa, st, sp, _ = cc[0]
    for sp2 in (16, 32, 4):
        if time.time() - t0 > 330:
            break
        trial(b, wa, 1, sp2)
tree_us2 = best_us([lambda: tree.run(q, kv)] * 4)
res.sort()
print("\n=== summary ===")
print("\n".join(rows))
print(f"tree fp8 again {tree_us2:.1f} us {fi_us / tree_us2:.3f}x")
for r in res[:12]:
    print(r[-1])
