"""How far is a batch-1 step of the real loop from a bare graph replay, and where does it go? (CUDA only)

    python scripts/gpu_loop_timeline.py [OUT_DIR]

The probe times bs-1 graphs replayed back to back; a token of the overlap loop takes longer
(docs/benchmarks.md: ~0.05 ms per step). This script records the GPU timeline (torch.profiler)
of three ways to run the same bs-1 decode graph, with a 512-token context:

* "replay":  `graph.replay()` back to back, inputs sent once;
* "copies":  per step the engine's own out-of-graph work, without the scheduler: the packed
             inputs' host-to-device copy, the replay, the tokens' device-to-host copy, an event;
* "loop":    the scheduler's overlap loop decoding one request (the benchmark's batch-1 path).

Each step ends with the greedy kernel (the packed graph's last kernel); per step it prints the
period (one greedy kernel's end to the next's), the part before the step's first one-row matmul
("pre": copies, the input-id gather, the embedding, and gaps), and the GPU's idle time in the
period; then the operations of one typical "loop" step's "pre" with their start and length.

The profiler can slow the host enough to starve the GPU in the "loop" case, so the loop is also
timed without it, by CUDA events around each `launch_batch` (the probe's batch-1: a 128-token
prompt, 512 tokens; three requests, the second with the first's prompt, so cached): per decode
step the GPU's busy time and the gap before the next step, and how long the request's start
takes (its prefill). Last, cProfile of three prefill-only requests: the host's share of a prefill.
"""

import gzip
import json
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from minisgl_edu.bench.offline import _IdTokenizer, random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
sched = Scheduler(
    SchedulerConfig(
        model=random_qwen3_dir(), device="cuda", num_pages=8192, max_running_requests=4, cuda_graph_max_bs=4
    ),
    QueueIO(),
    tokenizer=_IdTokenizer(),
)
eng, gr = sched.engine, sched.engine.graph_runner
assert 1 in gr.greedy_heads, "needs the bs-1 graph with the greedy kernel (defaults)"
CTX, STEPS = 512, 120


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def gpu_ops(prof) -> list[dict]:
    """Kernels, copies and sets of the GPU timeline, by start time (µs)."""
    path = os.path.join(out_dir, "timeline_tmp.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.remove(path)
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return sorted(ops, key=lambda e: e["ts"])


def per_step(ops: list[dict]) -> list[dict]:
    """Cut the timeline at each greedy kernel's end; -> per step: period, pre, idle (µs), its ops."""
    ends = [i for i, e in enumerate(ops) if "greedy" in e["name"]]
    steps = []
    for a, b in zip(ends, ends[1:]):
        t0 = ops[a]["ts"] + ops[a]["dur"]
        t1 = ops[b]["ts"] + ops[b]["dur"]
        body = ops[a + 1 : b + 1]
        first_gemv = next(e["ts"] for e in body if "gemv" in e["name"])
        busy, cursor = 0.0, t0
        for e in body:  # union of the intervals in (t0, t1]
            s, f = max(e["ts"], cursor), e["ts"] + e["dur"]
            if f > s:
                busy += f - s
                cursor = f
        steps.append(
            {
                "period": t1 - t0,
                "pre": first_gemv - t0,
                "idle": (t1 - t0) - busy,
                "pre_ops": [(e["name"][:60], e["ts"] - t0, e["dur"]) for e in body if e["ts"] < first_gemv],
            }
        )
    return steps


# One request's row with CTX tokens of pages (K/V of this step go to the dummy slot only).
row = eng.page_table.alloc_row()
eng.page_table.append(row, list(range(CTX // eng.page_size)))
results = {}
with torch.cuda.stream(eng.stream):
    gr.run(None, [CTX - 1], [gr.dummy_slot], [row], [CTX])  # the graph's inputs, once
    eng.stream.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            gr.graphs[1].replay()
        eng.stream.synchronize()
    results["replay"] = per_step(gpu_ops(prof))
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        pending = None
        for _ in range(STEPS):  # the engine's path for one greedy step, minus the scheduler
            _, tokens, _ = gr.run(None, [CTX - 1], [gr.dummy_slot], [row], [CTX])
            nxt = eng._pending([True], tokens)
            if pending is not None:
                pending.result()
            pending = nxt
        eng.stream.synchronize()
    results["copies"] = per_step(gpu_ops(prof))
eng.page_table.free_row(row)

prompt = list(range(100, 100 + CTX - STEPS))
sched.add_request(0, prompt, SamplingParams(max_tokens=8, ignore_eos=True))
sched.run_until_idle(overlap=True)  # warm
sched.add_request(1, prompt, SamplingParams(max_tokens=STEPS, ignore_eos=True))
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    sched.run_until_idle(overlap=True)
    torch.cuda.synchronize()
results["loop"] = per_step(gpu_ops(prof))[5:]  # skip the prefill and the first steps

# The same loop without the profiler (which can slow the host enough to starve the GPU): CUDA events
# recorded around each launch_batch on the engine's stream. "busy" = an event after the batch's
# last operation minus one before its first; "gap" = the next batch's first event minus this one's
# last: > 0 when the GPU waited for the host.
marks: list[tuple] = []
_launch = eng.launch_batch


def launch_with_events(batch, *a, **k):
    before, after = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    before.record(eng.stream)
    pending = _launch(batch, *a, **k)
    after.record(eng.stream)
    marks.append((batch.is_prefill, before, after))
    return pending


eng.launch_batch = launch_with_events
for uid in (2, 3, 4):  # the probe's batch-1: a 128-token prompt, 512 tokens (4: another prompt)
    marks.clear()
    sched.add_request(
        uid,
        list(range(100 + 1000 * (uid == 4), 228 + 1000 * (uid == 4))),
        SamplingParams(max_tokens=512, ignore_eos=True),
    )
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    t = time.perf_counter()
    start.record(eng.stream)
    sched.run_until_idle(overlap=True)
    end = torch.cuda.Event(enable_timing=True)
    end.record(eng.stream)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t
    dec = [(b, a) for p, b, a in marks if not p]
    pre = [(b, a) for p, b, a in marks if p]
    if pre and dec:  # the start of a request: until its prefill is launched, the prefill, until decode starts
        print(
            f"   request {uid} start (ms): to the prefill's launch {start.elapsed_time(pre[0][0]):.2f}, prefill "
            f"{pre[0][0].elapsed_time(pre[-1][1]):.2f} ({len(pre)} batches), to the first decode step "
            f"{pre[-1][1].elapsed_time(dec[0][0]):.2f}, decode steps {dec[0][0].elapsed_time(dec[-1][1]):.2f}, "
            f"after them {dec[-1][1].elapsed_time(end):.2f}; wall {wall * 1e3:.2f}"
        )
    busy = [b.elapsed_time(a) * 1e3 for b, a in dec]
    gaps = [a0.elapsed_time(b1) * 1e3 for (_, a0), (b1, _) in zip(dec, dec[1:])]
    print(
        f"loop (events), request {uid}: {512 / wall:.1f} tok/s, {wall / 512 * 1e3:.3f} ms per token; "
        f"{len(dec)} decode steps: busy median {med(busy):.1f} µs (sum {sum(busy) / 1e3:.1f} ms), "
        f"gap median {med(gaps):.1f} µs (sum {sum(gaps) / 1e3:.1f} ms, {sum(g > 20 for g in gaps)} over 20 µs, "
        f"largest {[round(g) for g in sorted(gaps)[-5:]]}); busy largest {[round(x) for x in sorted(busy)[-5:]]}"
    )
eng.launch_batch = _launch


print("| way | steps | period µs | pre µs | idle µs |")
print("|---|---|---|---|---|")
for name, steps in results.items():
    print(
        f"| {name} | {len(steps)} | {med([s['period'] for s in steps]):.1f} | {med([s['pre'] for s in steps]):.1f}"
        f" | {med([s['idle'] for s in steps]):.1f} |"
    )
for name in ("copies", "loop"):
    steps = results[name]
    if not steps:
        continue
    typical = sorted(steps, key=lambda s: s["period"])[len(steps) // 2]
    print(f"\n'{name}', the median step's ops before its first matmul (start after the last greedy end, length; µs):")
    for n, start, dur in typical["pre_ops"]:
        print(f"   {start:7.1f} {dur:6.1f}  {n}")
with gzip.open(os.path.join(out_dir, "loop_timeline.json.gz"), "wt") as f:
    json.dump(results, f)

# A request's prefill takes tens of milliseconds (above, "prefill"): is it the host? cProfile of
# three fresh 128-token prompts, prefill and one token each.
import cProfile
import io
import pstats

pr = cProfile.Profile()
for i in range(3):
    sched.add_request(
        10 + i, list(range(5000 + 200 * i, 5128 + 200 * i)), SamplingParams(max_tokens=1, ignore_eos=True)
    )
    torch.cuda.synchronize()
    t = time.perf_counter()
    pr.enable()
    sched.run_until_idle(overlap=True)
    torch.cuda.synchronize()
    pr.disable()
    print(f"prefill-only request {10 + i}: {(time.perf_counter() - t) * 1e3:.2f} ms (under cProfile)")
for key, lines in (("cumulative", 35), ("tottime", 15)):
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats(key).print_stats(lines)
    print(buf.getvalue()[-6000:])
