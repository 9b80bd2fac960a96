"""Is the 256-request GPU benchmark limited by the GPU or by the host? (CUDA only)

    python scripts/gpu_host_share.py

Runs the `--preset qwen3-0.6b` workload through the overlap loop step by step and times, per
step, the whole iteration and the part spent waiting for the GPU (`PendingForward.result`). A
step that waits ~0 ms was host-bound: the GPU finished batch N before the host had prepared
batch N+1 and processed N's tokens. Prints a table by decode batch size.
"""

import time

import torch

from minisgl_edu.bench.offline import PRESETS, _IdTokenizer, make_workload, random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.engine import engine as engine_mod
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

waits: list[float] = []
_result = engine_mod.PendingForward.result


def timed_result(self):
    t = time.perf_counter()
    out = _result(self)
    waits.append(time.perf_counter() - t)
    return out


engine_mod.PendingForward.result = timed_result
_, n, lo, hi, _ = PRESETS["qwen3-0.6b"]
model = random_qwen3_dir()
wl = make_workload(n, lo, hi, vocab=151936)
sched = Scheduler(SchedulerConfig(model=model, device="cuda", page_size=16, max_running_requests=n), QueueIO(),
                  tokenizer=_IdTokenizer())
for i, p in enumerate(wl.prompts[:4]):  # warm-up
    sched.add_request(10_000 + i, p[:64], SamplingParams(max_tokens=16, ignore_eos=True))
sched.run_until_idle(overlap=True)
sched.io.drain()
torch.cuda.synchronize()
t0 = time.perf_counter()
for i, (p, m) in enumerate(zip(wl.prompts, wl.output_lens)):
    sched.add_request(i, p, SamplingParams(max_tokens=m, ignore_eos=True))
steps = []
prev = time.perf_counter()
while True:
    k = len(waits)
    rec = sched.overlap_step()
    now = time.perf_counter()
    if rec is None and sched.is_idle and not sched.has_in_flight:
        break
    if rec is not None:
        steps.append((rec.phase, len(rec.items), now - prev, sum(waits[k:])))
    prev = now
torch.cuda.synchronize()
wall = time.perf_counter() - t0
print(f"{len(steps)} steps, {wall:.2f} s, {wl.output_tokens / wall:.0f} tok/s; waiting for the GPU "
      f"{sum(s[3] for s in steps):.2f} s")
print("| steps | batch size | step ms (mean) | of which waiting for GPU ms | host ms |")
print("|---|---|---|---|---|")
buckets = [("prefill", lambda s: s[0] == "prefill")] + [
    (f"decode {a}-{b}", lambda s, a=a, b=b: s[0] == "decode" and a <= s[1] <= b)
    for a, b in [(193, 256), (129, 192), (65, 128), (17, 64), (1, 16)]]
for name, f in buckets:
    sel = [s for s in steps if f(s)]
    if sel:
        step = sum(s[2] for s in sel) / len(sel) * 1e3
        wait = sum(s[3] for s in sel) / len(sel) * 1e3
        print(f"| {len(sel)} | {name} | {step:.2f} | {wait:.2f} | {step - wait:.2f} | total {sum(s[2] for s in sel):.2f} s")
