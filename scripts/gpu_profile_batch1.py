"""Where does a batch-1 decode step spend its time on the host? cProfile of one request.

    python scripts/gpu_profile_batch1.py [overlap|normal]   (on CUDA, after the bench made the model)
"""

import cProfile
import pstats
import sys
import time

import torch

from minisgl_edu.bench.offline import _IdTokenizer, random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

overlap = (sys.argv[1] if len(sys.argv) > 1 else "overlap") == "overlap"
sched = Scheduler(SchedulerConfig(model=random_qwen3_dir(), device="cuda", num_pages=4096, max_running_requests=8,
                                  cuda_graph_max_bs=8), QueueIO(), tokenizer=_IdTokenizer())
sched.add_request(0, list(range(100, 228)), SamplingParams(max_tokens=64, ignore_eos=True))
sched.run_until_idle(overlap=overlap)
sched.add_request(1, list(range(100, 228)), SamplingParams(max_tokens=512, ignore_eos=True))
torch.cuda.synchronize()
prof = cProfile.Profile()
t0 = time.perf_counter()
prof.enable()
sched.run_until_idle(overlap=overlap)
prof.disable()
torch.cuda.synchronize()
dt = time.perf_counter() - t0
print(f"batch-1, overlap={overlap}: {512 / dt:.1f} tok/s under cProfile")
pstats.Stats(prof).sort_stats("tottime").print_stats(22)
