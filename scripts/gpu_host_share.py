"""Is the 256-request GPU benchmark limited by the GPU or by the host? (CUDA only)

    python scripts/gpu_host_share.py [--max-prefill-tokens N] [--profile-at STEP] [--cprofile-at STEP]
    python scripts/gpu_host_share.py --requests 64 --input-len 512 --output-len 256   # the serving shape

Runs the `--preset qwen3-0.6b` workload through the overlap loop step by step and times, per
step, the whole iteration and the part spent waiting for the GPU (`PendingForward.result`). A
step that waits ~0 ms was host-bound: the GPU finished batch N before the host had prepared
batch N+1 and processed N's tokens. Prints a table by decode batch size.

`--profile-at STEP` also records steps STEP..STEP+9 with torch.profiler and prints the GPU
time of each kind of kernel per step, and how much of the window's wall time the GPU was busy
(the union of kernel intervals), and the idle time between kernels by the length of the gap:
the kernel mix of a large-batch decode step, and whether its idle time is the host's.
`--cprofile-at STEP` runs cProfile over steps STEP..STEP+29 (both may be given, at different
steps): where the host's time goes. `--requests N --input-len I --output-len O` replaces the
workload with N requests of I random prompt tokens and O output tokens each, all sent at once
(the serving benchmark's 64-stream shape, without HTTP). `--phases` times the parts of a step
with `perf_counter` (no profiler): scheduling, the launch (the graph's inputs, the attention
plan, the replay, the tokens' copy back), the wait, processing the results; ms per step, averaged
over the steps from the 10th on. `--graph-events` times each graph replay on the GPU with CUDA
events (no profiler) and the gap before it: the GPU's own time of a step, and its idle time;
and each garbage collection (a `gc.callbacks` hook), listed beside the longest gaps.
"""

import argparse
import collections
import contextlib
import cProfile
import gc
import pstats
import time

import torch
from gc_in_loop import Collections  # scripts/, beside this one

from minisgl_edu.bench.offline import PRESETS, Workload, _IdTokenizer, make_workload, random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.engine import engine as engine_mod
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig
from minisgl_edu.server.process import frozen_heap

waits: list[float] = []
_result = engine_mod.PendingForward.result


def timed_result(self):
    t = time.perf_counter()
    out = _result(self)
    waits.append(time.perf_counter() - t)
    return out


engine_mod.PendingForward.result = timed_result
phase_time: dict[str, float] = collections.Counter()


def timed(owner, name: str, label: str) -> None:
    """Wrap owner.name so that its wall time adds to phase_time[label] (outermost call only)."""
    inner = getattr(owner, name)
    busy = []

    def wrapper(*a, **k):
        if busy:
            return inner(*a, **k)
        busy.append(1)
        t = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            phase_time[label] += time.perf_counter() - t
            busy.pop()

    setattr(owner, name, wrapper)


ap = argparse.ArgumentParser()
ap.add_argument("--max-prefill-tokens", type=int, default=None)
ap.add_argument("--profile-at", type=int, default=0)
ap.add_argument("--cprofile-at", type=int, default=0)
ap.add_argument("--requests", type=int, default=0)
ap.add_argument("--input-len", type=int, default=512)
ap.add_argument("--output-len", type=int, default=256)
ap.add_argument("--phases", action="store_true")
ap.add_argument("--graph-events", action="store_true")
args = ap.parse_args()
# --graph-events: CUDA events just before and after each graph replay, on its stream (no
# profiler, whose per-node tracing slows a graph's launch). A replay's time is the graph's own on
# the GPU when the GPU reached it busy; the time from one replay's end to the next one's start is
# the GPU idle, or running the few copies in between, while the host prepared the next step.
graph_events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
if args.graph_events:
    _replay = torch.cuda.CUDAGraph.replay

    def timed_replay(self):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        _replay(self)
        end.record()
        graph_events.append((start, end))

    torch.cuda.CUDAGraph.replay = timed_replay
# --graph-events also times each garbage collection (generation, start, end), to set beside the gaps.
gc_runs = Collections()


phases = []
if args.phases:
    from minisgl_edu.attention import flashinfer_backend, triton_backend
    from minisgl_edu.engine import cuda_graph
    from minisgl_edu.scheduler import overlap

    # (owner, method, label), printed in this order: the indent says which part holds which.
    phases = [
        (overlap.OverlapMixin, "overlap_step", "whole step"),
        (Scheduler, "schedule", "schedule"),
        (engine_mod.Engine, "launch_batch", "launch"),
        (cuda_graph.CudaGraphRunner, "_prepare", "  graph inputs + attention prepare"),
        (flashinfer_backend.FlashInferBackend, "prepare_for_replay", "    FlashInfer: page lists + plan()"),
        (triton_backend.TritonDecodeBackend, "prepare_for_replay", "    Triton page lists"),
        (torch.cuda.CUDAGraph, "replay", "  replay"),
        (engine_mod.Engine, "_pending", "  tokens back (pinned copy, event)"),
        (overlap.OverlapMixin, "_complete", "complete"),
        (engine_mod.PendingForward, "result", "  result (wait + tolist)"),
        (Scheduler, "_process_results", "  process results"),
        (QueueIO, "send", "    io.send"),
    ]
    for owner, name, label in phases:
        timed(owner, name, label)
model = random_qwen3_dir()
if args.requests:
    n = args.requests
    prompts = make_workload(n, args.input_len, args.input_len, vocab=151936).prompts
    wl = Workload(prompts, [args.output_len] * n)
else:
    _, n, lo, hi, _ = PRESETS["qwen3-0.6b"]
    wl = make_workload(n, lo, hi, vocab=151936)
sched = Scheduler(
    SchedulerConfig(
        model=model, device="cuda", page_size=16, max_running_requests=n, max_prefill_tokens=args.max_prefill_tokens
    ),
    QueueIO(),
    tokenizer=_IdTokenizer(),
)
for i, p in enumerate(wl.prompts[:4]):  # warm-up
    sched.add_request(10_000 + i, p[:64], SamplingParams(max_tokens=16, ignore_eos=True))
sched.run_until_idle(overlap=True)
sched.io.drain()
# As the server's scheduler process runs its loop: the start-up heap out of the collector's way.
# (The stack is kept in a name: a dropped one would close the generator, and unfreeze, at once.)
heap = contextlib.ExitStack()
heap.enter_context(frozen_heap())
if args.graph_events:
    gc.callbacks.append(gc_runs)
torch.cuda.synchronize()
t0 = time.perf_counter()
for i, (p, m) in enumerate(zip(wl.prompts, wl.output_lens)):
    sched.add_request(i, p, SamplingParams(max_tokens=m, ignore_eos=True))
steps = []
prof = None
prev = time.perf_counter()
while True:
    k = len(waits)
    if args.profile_at and len(steps) == args.profile_at:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        )
        prof.__enter__()
        prof_t0, prof_step0 = time.perf_counter(), len(steps)
    if prof is not None and len(steps) == args.profile_at + 10:
        torch.cuda.synchronize()
        prof_wall = time.perf_counter() - prof_t0
        prof_batches = [s[1] for s in steps[prof_step0:]]
        prof.__exit__(None, None, None)
        prof_done, prof = prof, None
    if args.cprofile_at and len(steps) == args.cprofile_at:
        cprof = cProfile.Profile()
        cprof.enable()
    if args.cprofile_at and len(steps) == args.cprofile_at + 30:
        cprof.disable()
    if args.phases and len(steps) == 10:
        phase_time.clear()  # the prefills and the first steps are not the steady state
        phase_steps0 = len(steps)
    rec = sched.overlap_step()
    now = time.perf_counter()
    if rec is None and sched.is_idle and not sched.has_in_flight:
        break
    if rec is not None:
        steps.append((rec.phase, len(rec.items), now - prev, sum(waits[k:]), now, len(graph_events)))
    prev = now
torch.cuda.synchronize()
wall = time.perf_counter() - t0
print(
    f"{len(steps)} steps, {wall:.2f} s, {wl.output_tokens / wall:.0f} tok/s; waiting for the GPU "
    f"{sum(s[3] for s in steps):.2f} s"
)
print("| steps | batch size | step ms (mean) | of which waiting for GPU ms | host ms |")
print("|---|---|---|---|---|")
buckets = [("prefill", lambda s: s[0] == "prefill")] + [
    (f"decode {a}-{b}", lambda s, a=a, b=b: s[0] == "decode" and a <= s[1] <= b)
    for a, b in [(193, 256), (129, 192), (65, 128), (17, 64), (1, 16)]
]
for name, f in buckets:
    sel = [s for s in steps if f(s)]
    if sel:
        step = sum(s[2] for s in sel) / len(sel) * 1e3
        wait = sum(s[3] for s in sel) / len(sel) * 1e3
        print(
            f"| {len(sel)} | {name} | {step:.2f} | {wait:.2f} | {step - wait:.2f} | total {sum(s[2] for s in sel):.2f} s"
        )

if args.graph_events:
    # Each replay made in a decode step whose step before was a decode step too (the gap before
    # the first replay after the prompts' eager prefills would span them): (batch, graph ms, gap ms).
    # The step record is of the batch that landed; its iteration launched the next one.
    rows = []
    for before, (phase, bs, _, _, now, n_events) in zip(steps, steps[1:]):
        i = n_events - 1
        if phase == "decode" and before[0] == "decode" and i >= 1 and before[-1] == i:
            start, end = graph_events[i]
            # the host's window for this gap: the step before and this one
            rows.append(
                (bs, start.elapsed_time(end), graph_events[i - 1][1].elapsed_time(start), before[4] - before[2], now)
            )
    print("\nreplays timed with CUDA events: the graph's GPU time, and the time since the replay before")
    print("| decode batch | replays | graph ms p50 | gap ms p50 | gap ms p90 | gaps over 0.1 ms, summed |")
    print("|---|---|---|---|---|---|")
    for a, b in [(193, 256), (129, 192), (65, 128), (17, 64), (1, 16)]:
        sel = [r for r in rows if a <= r[0] <= b]
        if sel:
            graph, gap = sorted(r[1] for r in sel), sorted(r[2] for r in sel)
            over = sum(g for g in gap if g > 0.1)
            print(
                f"| {a}-{b} | {len(sel)} | {graph[len(sel) // 2]:.2f} | {gap[len(sel) // 2]:.2f} "
                f"| {gap[len(sel) * 9 // 10]:.2f} | {over:.0f} ms |"
            )
    per_gen = collections.Counter(g for g, *_ in gc_runs.runs)
    gc_ms = {g: sum(e - s for gg, s, e in gc_runs.runs if gg == g) * 1e3 for g in per_gen}
    counted = ", ".join(f"generation {g}: {per_gen[g]} ({gc_ms[g]:.1f} ms)" for g in sorted(per_gen))
    print(f"\ngarbage collections during the run: {counted or 'none'}")
    print("the longest gaps, and the collections in the host's window of the two steps around each:")
    print("| decode batch | gap ms | collections in the window (generation: ms) |")
    print("|---|---|---|")
    for bs, _, gap, lo, hi in sorted(rows, key=lambda r: -r[2])[:10]:
        inside = [f"{g}: {(e - s) * 1e3:.1f}" for g, s, e in gc_runs.runs if s < hi and e > lo]
        print(f"| {bs} | {gap:.2f} | {', '.join(inside) or '-'} |")

if args.phases:
    nsteps = len(steps) - phase_steps0
    batches = sorted({s[1] for s in steps[phase_steps0:]})
    print(f"\nphases, ms per step over {nsteps} steps (batch sizes {batches[0]}..{batches[-1]}):")
    for _, _, label in phases:
        if label in phase_time:  # a backend the run did not use has no line
            print(f"| {label} | {phase_time[label] * 1e3 / nsteps:.3f} |")

if args.profile_at:
    kernels = [e for e in prof_done.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    by_kind: dict[str, float] = collections.Counter()
    for e in kernels:
        by_kind[e.name[:60]] += e.time_range.elapsed_us()
    spans = sorted((e.time_range.start, e.time_range.end, e.name) for e in kernels)
    busy, end, last = 0.0, -1.0, ""
    gaps = collections.Counter()  # idle time between kernels, by the gap's length
    long_gaps = []  # (length us, start, end, kernel before, kernel after)
    for a, b, name in spans:  # union of the kernel intervals
        if end >= 0 and a > end:
            gap = a - end
            gaps["under 5 us" if gap < 5 else "5-50 us" if gap < 50 else "50 us or more"] += gap
            if gap >= 50:
                long_gaps.append((gap, end, a, last, name))
        if b > end:
            busy += b - max(a, end)
            end, last = b, name
    # The CUDA runtime calls on the host (launches, copies, synchronizations), and the ones under
    # way while the GPU stood idle: what the host was doing instead of launching.
    runtime = [
        e for e in prof_done.events() if e.device_type == torch.autograd.DeviceType.CPU and e.name.startswith("cuda")
    ]
    nsteps = len(prof_batches)
    print(
        f"\nprofiled steps {args.profile_at}..{args.profile_at + nsteps - 1}, batch sizes {prof_batches}: "
        f"wall {prof_wall * 1e3 / nsteps:.2f} ms per step, GPU busy {busy / 1e3 / nsteps:.2f} ms per step "
        f"(kernel time summed {sum(by_kind.values()) / 1e3 / nsteps:.2f})"
    )
    # Short gaps are the GPU moving from one kernel to the next (inside a graph, ~1-3 us each);
    # long ones are the GPU waiting for the host to launch the next step.
    print(
        "GPU idle between kernels, ms per step: "
        + ", ".join(f"{k} {v / 1e3 / nsteps:.2f}" for k, v in sorted(gaps.items()))
    )
    calls: dict[str, list[float]] = collections.defaultdict(list)
    for e in runtime:
        calls[e.name].append(e.time_range.elapsed_us())
    print(
        "CUDA runtime calls on the host, per step: "
        + ", ".join(
            f"{name} {len(us) / nsteps:.0f}x {sum(us) / 1e3 / nsteps:.3f} ms"
            for name, us in sorted(calls.items(), key=lambda kv: -sum(kv[1]))[:8]
        )
    )
    for gap, a, b, before, after in sorted(long_gaps, reverse=True)[:8]:
        during = [e for e in runtime if e.time_range.start < b and e.time_range.end > a]
        print(
            f"  idle {gap:.0f} us between {before[:40]} and {after[:40]}; host calls during it: "
            + ", ".join(f"{e.name} {e.time_range.elapsed_us():.0f} us" for e in during[:4])
        )
    print("| kernel | GPU ms per step |")
    print("|---|---|")
    for name, us in sorted(by_kind.items(), key=lambda kv: -kv[1])[:14]:
        print(f"| {name} | {us / 1e3 / nsteps:.3f} |")

if args.cprofile_at:
    print(f"\ncProfile of steps {args.cprofile_at}..{args.cprofile_at + 29} (30 steps), by own time:")
    pstats.Stats(cprof).sort_stats("tottime").print_stats(22)
