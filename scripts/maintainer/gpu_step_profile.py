"""One prompt-sized prefill step and three full-batch decode steps, kernel by kernel (CUDA).

    python scripts/maintainer/gpu_step_profile.py OUT_DIR [GRAPH_MAX_BS]   # 0: eager decode steps

The scheduler of `bench/offline.py`'s random Qwen3-0.6B-shaped model, normal loop. The prefill
step is the burst's: 15 prompts of 540 tokens (8,100 tokens, under the 8,192-token budget), after
three unprofiled ones; the decode steps run 256 requests with ~1,000-token contexts. Prints each
step's wall time and torch.profiler's kernels by CUDA time; writes the tables (prefill_prof.txt,
decode_prof.txt) and the prefill step's Chrome trace to OUT_DIR.
"""

import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from minisgl_edu import SamplingParams
from minisgl_edu.bench.offline import _IdTokenizer, random_qwen3_dir
from minisgl_edu.models import resolve_model
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

out = sys.argv[1]
graphs = int(sys.argv[2]) if len(sys.argv) > 2 else 256
cfg = SchedulerConfig(model=resolve_model(random_qwen3_dir()), device="cuda", max_running_requests=256, page_size=16,
                      cuda_graph_max_bs=graphs, overlap=False)  # fmt: skip
s = Scheduler(cfg, QueueIO(), tokenizer=_IdTokenizer())
vocab = s.engine.model_config.vocab_size
g = torch.Generator().manual_seed(0)
uid = 0


def add(n: int, length: int, out_len: int) -> None:
    global uid
    for _ in range(n):
        prompt = torch.randint(100, vocab - 100, (length,), generator=g).tolist()  # no prefix hits
        s.add_request(uid, prompt, SamplingParams(max_tokens=out_len, ignore_eos=True))
        uid += 1


def step_ms() -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    s.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def table(p) -> str:
    return p.key_averages().table(sort_by="cuda_time_total", row_limit=30, max_name_column_width=70)


add(4, 64, 4)
s.run_until_idle()  # warm-up
for rep in range(3):
    add(15, 540, 1)
    print(f"prefill step {rep}: {step_ms():.2f} ms")
    s.run_until_idle()
add(15, 540, 1)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    ms = step_ms()
s.run_until_idle()
print(f"profiled prefill step: {ms:.2f} ms")
print(table(p))
open(f"{out}/prefill_prof.txt", "w").write(table(p))
p.export_chrome_trace(f"{out}/prefill_trace.json")

add(256, 1000, 64)
while s.waiting:
    s.step()
s.step()
for _ in range(3):
    ms = step_ms()
print(f"decode step (batch {len(s.running)}): {ms:.2f} ms")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    for _ in range(3):
        step_ms()
print(table(p))
open(f"{out}/decode_prof.txt", "w").write(table(p))
