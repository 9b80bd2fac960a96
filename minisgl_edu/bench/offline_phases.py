"""Where an offline run's time goes, phase by phase, next to the floor of each phase (CUDA).

    python -m minisgl_edu.bench.offline_phases                      # the qwen3-0.6b preset's 256 requests
    python -m minisgl_edu.bench.offline_phases --max-prefill-tokens 16384 --json phases.json
    python -m minisgl_edu.bench.offline_phases --kv-cache-dtype fp8_e4m3    # FP8 pages: half the K/V bytes

Where this sits on the request path: around the engine, as `bench/offline.py` drives it (the
same workload, the scheduler's overlap loop, the server's CUDA defaults). A CUDA event is recorded
on the engine's stream before and after every batch, so each batch's GPU time is known, and the
time the GPU sat idle between two batches (the host was late) is the gap between one batch's end
and the next one's start. The run is then cut into phases:

* prefill steps (prompt chunks; mixed batches count here),
* decode steps by batch size (the small batches at the end of the run are its tail),
* host gaps: the GPU idle between batches, before the first one and after the last.

Each phase's **floor** is what the H200 cannot go below for the same work: every byte the step
must read at the memory's copy bandwidth (the weights once per step, the K/V cache of every
context token, `kv_bytes_per_token` each) plus its matmul FLOPs at the measured bf16 peak. The
figures default to the H200's (`--bandwidth`, `--flops`, docs/benchmarks.md); time above the floor
is what a change to the engine can still win.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from typing import Optional

import torch

from minisgl_edu.kvcache.pool import KVPool

H200_BYTES_PER_S = 4.26e12  # device-to-device copy, bytes read and written (KINDS.md)
H200_FLOPS = 790e12  # 8192^3 bf16 matmul through PyTorch, random data
DECODE_BUCKETS = ((193, 256), (129, 192), (65, 128), (17, 64), (1, 16))


@dataclass
class StepTiming:
    phase: str  # "prefill" | "decode" | "mixed" | "verify"
    size: int  # requests in the batch
    tokens: int  # tokens computed
    sampled: int  # rows that go through the LM head
    kv_tokens: int  # context tokens the batch's attention reads (sum of kv_lens)
    start: torch.cuda.Event
    end: torch.cuda.Event


@dataclass
class ModelCost:
    weight_bytes: int  # every parameter, read once per step
    matmul_params: int  # parameters of the layers' matmuls (each costs 2 FLOPs per token)
    lm_head_params: int  # hidden x vocab (2 FLOPs per sampled row)
    kv_bytes_per_token: int  # K and V of one token over all layers
    attn_flops_per_pair: int  # 4 * layers * heads * head_dim: one query token against one key

    @classmethod
    def of(cls, engine) -> ModelCost:
        model, mc = engine.model, engine.model_config
        weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        lm_head = mc.vocab_size * mc.hidden_size
        embed = lm_head  # the embedding is a lookup, not a matmul
        matmul = sum(p.numel() for p in model.parameters() if p.dim() == 2) - embed
        if not getattr(mc, "tie_word_embeddings", False):
            matmul -= lm_head
        head_dim = mc.head_dim
        kv = KVPool.bytes_per_token(mc.num_layers, engine.num_kv_heads, head_dim, engine.kv_dtype)  # scales too
        return cls(weight_bytes, matmul, lm_head, kv, 4 * mc.num_layers * mc.num_heads * head_dim)

    def floor_s(self, s: StepTiming, bandwidth: float, flops: float) -> float:
        """Seconds the step cannot go below: its bytes at `bandwidth` plus its FLOPs at `flops`."""
        read = self.weight_bytes + s.kv_tokens * self.kv_bytes_per_token
        if s.phase in ("prefill", "mixed"):  # a prompt token attends to the tokens before it (~half)
            pairs = s.kv_tokens * max(s.tokens // max(s.size, 1), 1) // 2
        else:
            pairs = s.kv_tokens
        work = (
            2 * self.matmul_params * s.tokens + 2 * self.lm_head_params * s.sampled + self.attn_flops_per_pair * pairs
        )
        return read / bandwidth + work / flops


def time_steps(sched) -> list[StepTiming]:
    """Wrap `sched.engine.launch_batch` so that every batch is bracketed by two CUDA events."""
    engine = sched.engine
    steps: list[StepTiming] = []
    launch = engine.launch_batch

    def timed(batch):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(engine.stream)
        pending = launch(batch)
        end.record(engine.stream)
        items = batch.items
        steps.append(
            StepTiming(
                batch.phase,
                len(items),
                sum(it.num_tokens for it in items),
                sum(1 for it in items if it.completes_prompt),
                sum(it.end for it in items),
                start,
                end,
            )
        )
        return pending

    engine.launch_batch = timed
    return steps


def phase_of(s: StepTiming) -> str:
    if s.phase != "decode":
        return "prefill steps" if s.phase in ("prefill", "mixed") else f"{s.phase} steps"
    lo, hi = next(b for b in DECODE_BUCKETS if b[0] <= s.size <= b[1]) if s.size <= 256 else (257, s.size)
    return f"decode, batch {lo}-{hi}"


def breakdown(steps: list[StepTiming], wall_s: float, t0: torch.cuda.Event, t1: torch.cuda.Event, cost: ModelCost,
              bandwidth: float = H200_BYTES_PER_S, flops: float = H200_FLOPS) -> list[dict]:  # fmt: skip
    """One row per phase: steps, seconds, share of the run, floor seconds; the host gaps; the total."""
    rows: dict[str, dict] = {}
    gaps, prev = 0.0, t0
    for s in steps:
        gaps += max(prev.elapsed_time(s.start), 0.0) / 1e3
        prev = s.end
        row = rows.setdefault(phase_of(s), {"steps": 0, "seconds": 0.0, "floor_s": 0.0})
        row["steps"] += 1
        row["seconds"] += s.start.elapsed_time(s.end) / 1e3
        row["floor_s"] += cost.floor_s(s, bandwidth, flops)
    gaps += max(prev.elapsed_time(t1), 0.0) / 1e3
    order = ["prefill steps"] + [f"decode, batch {lo}-{hi}" for lo, hi in DECODE_BUCKETS]
    out = [{"phase": k, **rows[k]} for k in order + sorted(set(rows) - set(order)) if k in rows]
    out.append({"phase": "host gaps (GPU idle)", "steps": 0, "seconds": gaps, "floor_s": 0.0})
    total = {"phase": "total (wall)", "steps": len(steps), "seconds": wall_s, "floor_s": sum(r["floor_s"] for r in out)}
    for r in [*out, total]:
        r["share"] = r["seconds"] / wall_s
        r["above_floor_s"] = r["seconds"] - r["floor_s"]
    return [*out, total]


def run(num_requests: int = 256, max_prefill_tokens: Optional[int] = None, bandwidth: float = H200_BYTES_PER_S,
        flops: float = H200_FLOPS, **engine_kw) -> dict:  # fmt: skip
    from minisgl_edu import SamplingParams
    from minisgl_edu.bench.offline import PRESETS, _IdTokenizer, make_workload, random_qwen3_dir
    from minisgl_edu.models import resolve_model
    from minisgl_edu.process import frozen_heap
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    _, _, lo, hi, _ = PRESETS["qwen3-0.6b"]
    model_dir = resolve_model(random_qwen3_dir())
    config = SchedulerConfig(model=model_dir, device="cuda", max_running_requests=num_requests, page_size=16,
                             max_prefill_tokens=max_prefill_tokens, cuda_graph_max_bs=256, **engine_kw)  # fmt: skip
    sched = Scheduler(config, QueueIO(), tokenizer=_IdTokenizer())
    wl = make_workload(num_requests, lo, hi, sched.engine.model_config.vocab_size)
    cost = ModelCost.of(sched.engine)

    def go(prompts, lens) -> float:
        base = 10_000_000 * (sched.batch_count + 1)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i, (p, n) in enumerate(zip(prompts, lens)):
            sched.add_request(base + i, p, SamplingParams(max_tokens=n, ignore_eos=True))
        sched.run_until_idle(overlap=True)
        torch.cuda.synchronize()
        sched.io.drain()
        return time.perf_counter() - t

    with frozen_heap():
        go([p[:64] for p in wl.prompts[:4]], [16] * 4)  # warm-up: JIT kernels, cuBLAS, the allocator
        steps = time_steps(sched)
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record(sched.engine.stream)
        wall = go(wl.prompts, wl.output_lens)
        t1.record(sched.engine.stream)
        torch.cuda.synchronize()
    rows = breakdown(steps, wall, t0, t1, cost, bandwidth, flops)
    return {
        "requests": num_requests,
        "output_tokens": wl.output_tokens,
        "tok_s": round(wl.output_tokens / wall, 1),
        "wall_s": round(wall, 3),
        "rows": rows,
    }


def format_rows(res: dict) -> str:
    lines = [
        f"{res['requests']} requests, {res['output_tokens']} output tokens in {res['wall_s']:.2f} s "
        f"({res['tok_s']:,.0f} tok/s)",
        f"{'phase':<22} {'steps':>6} {'seconds':>8} {'share':>6} {'floor s':>8} {'above floor':>12}",
    ]
    for r in res["rows"]:
        lines.append(
            f"{r['phase']:<22} {r['steps']:>6} {r['seconds']:>8.3f} {r['share']:>6.0%} {r['floor_s']:>8.3f} "
            f"{r['above_floor_s']:>12.3f}"
        )
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num-requests", type=int, default=256)
    ap.add_argument("--max-prefill-tokens", type=int, default=None)
    ap.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e4m3"], help="what the KV pages store")
    ap.add_argument("--bandwidth", type=float, default=H200_BYTES_PER_S, help="bytes/s of the floor (H200's)")
    ap.add_argument("--flops", type=float, default=H200_FLOPS, help="bf16 FLOP/s of the floor (H200's)")
    ap.add_argument("--json", help="write the rows here too")
    args = ap.parse_args(argv)
    res = run(
        args.num_requests, args.max_prefill_tokens, args.bandwidth, args.flops, kv_cache_dtype=args.kv_cache_dtype
    )
    print(format_rows(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return res


if __name__ == "__main__":
    main()
