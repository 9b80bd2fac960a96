"""Which kernel settings make the small decode graphs fastest? (CUDA only; the batch-1 question)

    python scripts/gpu_bs1_sweep.py [OUT_DIR] [--quick [--bounds]]

For the random Qwen3-0.6B-shaped model (the benchmark's), with one engine built once: recapture
the decode graphs of 1, 2 and 4 requests under each variant of

* the one-row matmul's tile, per matrix (`gemv.pick_config`: rows per program, warps),
* the split-KV attention (`decode_attention`: splits per batch size, keys per step, warps; from
  which batch size on cached keys are read before `gdc_wait()`, `EARLY_KV_MIN_BS`), "rope_attn",
* `qk_rope_store` reading position, cos/sin and KV slot before `gdc_wait()` or after (`EARLY_INPUTS`),
* as an upper bound for anything that would keep weights in L2: every layer reading layer 0's,

check each variant's logits against the first one's (same inputs; different summation orders
move them by up to a few 1e-2 in this random model, a race by far more), and time 200
back-to-back replays with 512 and 1,024 tokens of context per request. Each stage keeps the best
setting so far. Last: the kernel timeline of one bs-1 replay (torch.profiler) and a table.
--quick: only the defaults, "rope_attn" and `EARLY_INPUTS` flipped; --bounds adds the defaults without "greedy"
(kernels/greedy.py) and the L2 upper bound. --residency: bs 1 only, the qkv matmul's tile
against cached keys read before the wait and "rope_attn".
"""

import json
import os
import sys

import torch

from minisgl_edu import kernels
from minisgl_edu.bench.offline import _IdTokenizer, random_qwen3_dir
from minisgl_edu.engine.cuda_graph import CudaGraphRunner
from minisgl_edu.kernels import decode_attention as da
from minisgl_edu.kernels import gemv as gv
from minisgl_edu.kernels import qk_rope_store as qrs
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

out_dir = next((a for a in sys.argv[1:] if not a.startswith("--")), "/tmp")
quick = "--quick" in sys.argv
sched = Scheduler(SchedulerConfig(model=random_qwen3_dir(), device="cuda", num_pages=8192, max_running_requests=4,
                                  cuda_graph_max_bs=4), QueueIO(), tokenizer=_IdTokenizer())
eng = sched.engine
torch.manual_seed(0)
eng.pool.k.normal_(0, 1)  # cached keys and values that are not all zero, so the logits check means something
eng.pool.v.normal_(0, 1)
CTX = (512, 1024)
rows = []
per_row = max(CTX) // eng.page_size
for i in range(4):
    r = eng.page_table.alloc_row()
    eng.page_table.append(r, list(range(i * per_row, (i + 1) * per_row)))  # pages of its own
    rows.append(r)

MATRICES = {"qkv": (4096, 1024), "o": (1024, 2048), "gate_up": (6144, 1024), "down": (1024, 3072)}
base_gemv, base_splits, base_init = gv.pick_config, da.num_splits, da.SplitKVDecode.__init__
# What the engine runs without the sweep (MINISGL_EDU_TRITON included), read from the modules.
DEFAULT = {"greedy": kernels.enabled("greedy"), "rope_attn": kernels.enabled("rope_attn"), "gemv": {}, "splits": {},
           "block": da.BLOCK, "warps": da.NUM_WARPS, "early_kv_min_bs": da.EARLY_KV_MIN_BS, "alias": False,
           "early_rope": qrs.EARLY_INPUTS}
decoder_layers = eng.model.model.layers
own_weights = [[p.data for p in layer.parameters()] for layer in decoder_layers]


def apply(v: dict) -> None:
    da.EARLY_KV_MIN_BS = v["early_kv_min_bs"]
    qrs.EARLY_INPUTS = v["early_rope"]
    for layer, own in zip(decoder_layers, own_weights):  # "alias": every layer reads layer 0's weights
        for p, mine, first in zip(layer.parameters(), own, own_weights[0]):
            p.data = first if v["alias"] else mine
    (kernels.ENABLED.add if v["rope_attn"] else kernels.ENABLED.discard)("rope_attn")
    (kernels.ENABLED.add if v["greedy"] else kernels.ENABLED.discard)("greedy")
    gv.pick_config = lambda n, k: v["gemv"].get((n, k)) or base_gemv(n, k)
    da.num_splits = lambda bs, hkv: v["splits"].get(bs) or base_splits(bs, hkv)

    def init(self, *a, **kw):
        base_init(self, *a, **{**kw, "block": v["block"]})
        self.num_warps = v["warps"]

    da.SplitKVDecode.__init__ = init


def capture(sizes: int) -> CudaGraphRunner:
    eng.graph_runner = None
    torch.cuda.empty_cache()
    eng.graph_runner = CudaGraphRunner(eng, sizes)
    return eng.graph_runner


def logits_of(gr: CudaGraphRunner, bs: int) -> torch.Tensor:
    """Logits of `bs` requests at position 510, their new K/V written where it belongs (so "rope_attn",
    which takes the new key from registers, and the other path read the same keys)."""
    eng.last_tokens[rows[:bs]] = torch.tensor([42 + i for i in range(bs)], device=eng.device)
    slots = [eng.page_table.pages[r][510 // eng.page_size] * eng.page_size + 510 % eng.page_size for r in rows[:bs]]
    with torch.cuda.stream(eng.stream):
        logits, _, _ = gr.run_packed(None, [510] * bs, slots, rows[:bs], [511] * bs)
        out = logits.float().clone()
        eng.stream.synchronize()
    return out


def replay_ms(gr: CudaGraphRunner, bs: int, ctx: int, n: int = 200) -> float:
    with torch.cuda.stream(eng.stream):
        gr.run_packed(None, [ctx - 1] * bs, [gr.dummy_slot] * bs, rows[:bs], [ctx] * bs)
        eng.stream.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            gr.graphs[bs].replay()
        b.record()
        b.synchronize()
    return a.elapsed_time(b) / n


reference: dict[int, torch.Tensor] = {}
results: list[tuple[str, dict, float | None]] = []


def trial(name: str, v: dict, sizes: tuple[int, ...] = (1,), ctxs: tuple[int, ...] = (512,)) -> dict:
    """Capture under `v`, check, time; -> {(bs, ctx): ms}, empty if it failed."""
    apply(v)
    try:
        gr = capture(max(sizes))
        errs = []
        for bs in sizes:
            got = logits_of(gr, bs)
            if bs not in reference:
                reference[bs] = got
            errs.append(((got - reference[bs]).norm() / reference[bs].norm()).item())
        times = {(bs, c): replay_ms(gr, bs, c) for bs in sizes for c in ctxs}
    except Exception as e:  # a configuration that does not compile (too many registers, ...)
        print(f"   {name:<34s} FAILED: {type(e).__name__}: {str(e)[:160]}", flush=True)
        results.append((name, {}, None))
        return {}
    err = max(errs)
    ok = err < 5e-2
    print(f"   {name:<34s} " + " ".join(f"bs{b}/{c}={t:.4f}" for (b, c), t in times.items())
          + f"  err={err:.1e}{'' if ok else '  WRONG'}", flush=True)
    results.append((name, times, err))
    return times if ok else {}


def best_of(cands: list[tuple[str, dict]], key, sizes=(1,), ctxs=(512,)) -> dict:
    scored = [(sum(t[k] for k in key), n, v) for n, v in cands if (t := trial(n, v, sizes, ctxs))]
    return min(scored, key=lambda s: s[0])[2] if scored else cands[0][1]


print("1. the defaults (graphs of 1, 2, 4)")
trial("defaults", DEFAULT, (1, 2, 4), CTX)
BS1 = [(1, 512), (1, 1024)]


def full_sweep() -> dict:
    cur = dict(DEFAULT)
    print("2. gemv tiles, one matrix at a time")
    tiles = [(2, 4), (4, 4), (8, 4), (16, 4), (2, 8), (4, 8), (8, 8), (16, 8)]
    for mat, nk in MATRICES.items():
        cur = best_of([(f"{mat} {t}", {**cur, "gemv": {**cur["gemv"], nk: t}}) for t in tiles], BS1, (1,), CTX)
    print("3. attention at bs 1: splits x warps x keys per step")
    cands = [(f"bs1 S={s} w={w} blk={k}", {**cur, "splits": {**cur["splits"], 1: s}, "warps": w, "block": k})
             for s in (16, 32, 64) for w in (2, 4, 8) for k in (16, 32)]
    cur = best_of(cands, BS1, (1,), CTX)
    print("4. attention at bs 2 and 4: splits, and cached keys read before the wait or after")
    for bs, choices in ((2, (8, 16, 32)), (4, (4, 8, 16))):
        cands = [(f"bs{bs} S={s} early_kv={e}", {**cur, "splits": {**cur["splits"], bs: s},
                                                 "early_kv_min_bs": min(cur["early_kv_min_bs"], bs) if e
                                                 else max(cur["early_kv_min_bs"], bs + 1)})
                 for s in choices for e in (False, True)]
        cur = best_of(cands, [(bs, 512), (bs, 1024)], (bs,), CTX)
    print("5. upper bound: every layer reads layer 0's weights (they stay in L2)")
    trial("weights in L2", {**cur, "alias": True}, (1,), CTX)
    print("6. the best, with and without 'rope_attn', and the defaults again")
    best = best_of([("best", cur), ("best + rope_attn", {**cur, "rope_attn": True})], BS1, (1,), CTX)
    trial("best (all sizes)", best, (1, 2, 4), CTX)
    return best


if "--residency" in sys.argv:
    # Do the cached keys pay when read before the wait at bs 1 if the qkv matmul leaves room on the
    # SMs? Its default tile (4 rows, 8 warps) is ~1,000 programs of 256 threads, a full wave.
    for tile in (None, (8, 4), (16, 4)):
        for label, extra in (("", {}), (" + keys before the wait", {"early_kv_min_bs": 1}),
                             (" + rope_attn", {"rope_attn": True})):
            trial(f"qkv {tile or 'default'}{label}", {**DEFAULT, "gemv": {MATRICES['qkv']: tile} if tile else {},
                                                      **extra}, (1,), CTX)
    best = DEFAULT
elif quick:
    trial("rope_attn", {**DEFAULT, "rope_attn": True}, (1, 2, 4), CTX)
    trial("early_rope flipped", {**DEFAULT, "early_rope": not DEFAULT["early_rope"]}, (1, 2, 4), CTX)
    if "--bounds" in sys.argv:
        trial("without greedy", {**DEFAULT, "greedy": False}, (1, 2, 4), CTX)
        trial("weights in L2", {**DEFAULT, "alias": True}, (1,), CTX)
    best = DEFAULT
else:
    best = full_sweep()
trial("defaults again", DEFAULT, (1, 2, 4), CTX)
print("best variant:", json.dumps({k: (str(v) if isinstance(v, dict) else v) for k, v in best.items()}))


def timeline(name: str, v: dict) -> list[tuple[str, float]]:
    """Kernels of one bs-1 replay (the middle one of three): (name, us from the previous kernels'
    last end to this one's end), via a chrome trace of torch.profiler."""
    from torch.profiler import ProfilerActivity, profile

    apply(v)
    gr = capture(1)
    with torch.cuda.stream(eng.stream):
        gr.run_packed(None, [511], [gr.dummy_slot], rows[:1], [512])
        eng.stream.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                gr.graphs[1].replay()
            eng.stream.synchronize()
    path = os.path.join(out_dir, f"trace_{name}.json")
    prof.export_chrome_trace(path)
    ev = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    n = len(ev) // 3
    one = ev[n: 2 * n]
    ends = [e["ts"] + e["dur"] for e in one]
    span = max(ends) - one[0]["ts"]
    rows_ = [(one[0]["name"], one[0]["dur"])] + [(e["name"], ends[i + 1] - max(ends[: i + 1]))
                                                 for i, e in enumerate(one[1:])]
    print(f"   {name}: {n} kernels, {span:.1f} us from the first start to the last end")
    return rows_


print("7. kernel timeline of one bs-1 replay, the best variant (us per kernel, from the previous kernel's end)")
timed = timeline("best", best)
agg: dict[str, list[float]] = {}
for k, us in timed:
    agg.setdefault(k[:48], []).append(us)
for k, vals in sorted(agg.items(), key=lambda kv: -sum(kv[1])):
    print(f"     {k:<50s} x{len(vals):<4d} total {sum(vals):8.1f}  mean {sum(vals) / len(vals):6.2f}")
print("   the last 12 kernels:")
for k, us in timed[-12:]:
    print(f"     {k[:60]:<62s}{us:7.2f}")

print("\n| variant | " + " | ".join(f"bs{b}/{c}" for b in (1, 2, 4) for c in CTX) + " | err |")
for name, times, err in results:
    if times and len(times) >= 2:
        print(f"| {name} | " + " | ".join(f"{times.get((b, c), float('nan')):.4f}" for b in (1, 2, 4) for c in CTX)
              + f" | {err:.1e} |")
