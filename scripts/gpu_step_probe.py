"""Where a decode step's time goes on the GPU (CUDA only; run after the bench made the model).

    python scripts/gpu_step_probe.py [OUT_DIR] [--quick]

Prints, for the random Qwen3-0.6B-shaped model:
1. batch-1 decode tok/s end to end (overlap and normal loop), 512 tokens after a 128-token prompt,
   and how much of an overlap step is host work (the step minus its wait in `result()`);
2. the GPU time of one replay of the captured decode graph at several batch sizes (CUDA events
   around 100 back-to-back replays, 512 tokens of context per request), i.e. the GPU floor of a
   step with no host in the way;
3. the kernels of one batch-1 replay (torch.profiler), by total GPU time;
4. the host's time per batch-1 step (cProfile of the overlap loop, by own time).
"""

import cProfile
import io
import os
import pstats
import sys
import time

import torch

from minisgl_edu.bench.offline import _IdTokenizer, random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
quick = "--quick" in sys.argv  # parts 1 and 2 only
MAX_BS = 64
sched = Scheduler(
    SchedulerConfig(
        model=random_qwen3_dir(), device="cuda", num_pages=8192, max_running_requests=MAX_BS, cuda_graph_max_bs=MAX_BS
    ),
    QueueIO(),
    tokenizer=_IdTokenizer(),
)
eng = sched.engine
prompt = list(range(100, 228))
sched.add_request(0, prompt, SamplingParams(max_tokens=64, ignore_eos=True))
sched.run_until_idle(overlap=True)

uid = 1


def run_one(overlap: bool, profiler: cProfile.Profile | None = None) -> float:
    """One request alone (the 128-token prompt, 512 tokens) to the end; -> wall seconds."""
    global uid
    sched.add_request(uid, prompt, SamplingParams(max_tokens=512, ignore_eos=True))
    uid += 1
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    sched.run_until_idle(overlap=overlap)
    if profiler is not None:
        profiler.disable()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


print("1. batch-1 end to end (128-token prompt, 512 tokens)")
for overlap in (True, False, True):
    dt = run_one(overlap)
    print(f"   overlap={overlap}: {512 / dt:7.1f} tok/s  ({dt / 512 * 1e3:.3f} ms per token, prefill included)")

# Host or GPU? The same run once more, timing the wait for the GPU inside each step's result().
from minisgl_edu.engine import engine as engine_mod

waits = []
_result = engine_mod.PendingForward.result


def timed_result(self):
    t = time.perf_counter()
    try:
        return _result(self)
    finally:
        waits.append(time.perf_counter() - t)


engine_mod.PendingForward.result = timed_result
dt = run_one(True)
engine_mod.PendingForward.result = _result
step_ms, wait_ms = dt / len(waits) * 1e3, sum(waits[1:]) / max(len(waits) - 1, 1) * 1e3
print(
    f"   overlap, per step: {step_ms:.3f} ms, of which waiting for the GPU {wait_ms:.3f} ms "
    f"-> host {step_ms - wait_ms:.3f} ms ({len(waits)} steps)"
)

# Where the host part goes: wall time inside each piece of an overlap step (perf_counter around
# the calls, no profiler), in microseconds per step. Nested rows are included in their parent.
spent: dict[str, float] = {}


def clock(obj, name: str, label: str) -> None:
    fn = getattr(obj, name)

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t

    setattr(obj, name, timed)


pieces = [
    (sched, "schedule", "schedule"),
    (eng, "launch_batch", "launch_batch"),
    (eng.graph_runner, "run", "  graph_runner.run"),
    (eng.attn, "prepare_for_replay", "    prepare_for_replay"),
    (eng.graph_runner.inputs, "send", "    inputs.send"),
    (eng.sampler, "sample", "  sample"),
    (eng, "_pending", "  _pending (copy out)"),
    (sched, "_process_results", "process_results"),
]
for obj, name, label in pieces + [(engine_mod.PendingForward, "result", "result (wait)")]:
    clock(obj, name, label)
for g in eng.graph_runner.graphs.values():
    clock(g, "replay", "    graph.replay")
steps = 512
dt = run_one(True)
print(f"   host pieces per step, us ({steps / dt:.1f} tok/s in this run):")
for label, sec in spent.items():
    print(f"     {label:<22s}{sec / steps * 1e6:8.1f}")
print(f"     {'(step)':<22s}{dt / steps * 1e6:8.1f}")
for obj, name, _ in pieces:
    delattr(obj, name)
engine_mod.PendingForward.result = _result
for g in eng.graph_runner.graphs.values():
    delattr(g, "replay")

print("2. GPU time per graph replay (512-token contexts, 100 replays back to back)")
gr = eng.graph_runner
ctx = 512
pages = list(range(ctx // eng.page_size))
rows = []
for _ in range(MAX_BS):
    r = eng.page_table.alloc_row()
    eng.page_table.append(r, pages)  # every row reads the same pages: timing only
    rows.append(r)
replay_ms = {}


def replay_once(bs: int) -> None:
    """Fill the graph of `bs` with `bs` requests of `ctx` tokens (K/V written to the dummy slot
    only, so the pages of cached prefixes stay intact) and replay it once."""
    gr.run(None, [ctx - 1] * bs, [gr.dummy_slot] * bs, rows[:bs], [ctx] * bs)


for bs in gr.bs_list:
    if bs not in (1, 2, 4, 8, 16, 32, 64):
        continue
    with torch.cuda.stream(eng.stream):
        replay_once(bs)
        eng.stream.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(100):
            gr.graphs[bs].replay()
        b.record()
        b.synchronize()
    replay_ms[bs] = a.elapsed_time(b) / 100
    print(f"   bs={bs:3d}: {replay_ms[bs]:.3f} ms per replay -> {bs / replay_ms[bs] * 1e3:8.0f} tok/s ceiling")

if quick:
    sys.exit(0)
print("3. kernels of one batch-1 graph replay (torch.profiler, 5 replays)")
from torch.profiler import ProfilerActivity, profile

with torch.cuda.stream(eng.stream):
    replay_once(1)
    eng.stream.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            gr.graphs[1].replay()
        eng.stream.synchronize()
ka = prof.key_averages()
for key in ("self_device_time_total", "self_cuda_time_total", "device_time_total", "cuda_time_total"):
    try:
        table = ka.table(sort_by=key, row_limit=30, max_name_column_width=70)
        break
    except Exception:
        continue
print(table)
try:
    prof.export_chrome_trace(os.path.join(out_dir, "replay_bs1_trace.json"))
except Exception as e:
    print("   (no chrome trace:", e, ")")
for r in rows:
    eng.page_table.free_row(r)

print("4. host time per batch-1 step (cProfile, overlap loop, 512 tokens)")
pr = cProfile.Profile()
print(f"   {512 / run_one(True, profiler=pr):.1f} tok/s under cProfile")
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(28)
print(s.getvalue()[-9000:])
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(30)
print(s.getvalue()[-7000:])
