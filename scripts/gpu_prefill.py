"""Short prefills on a GPU: eager against token-row graphs, in one process on one engine.

What a request's time to first token costs inside the engine, without HTTP: one prompt (or a few)
of n new tokens, after a cached prefix of P tokens or none, scheduled, run and sampled with the
server's CUDA defaults on random bf16 weights of the Qwen3-0.6B shape. Each case runs eagerly
(`ROW_GRAPH_MAX_READS` = 0) and through a token-row graph (no read limit), so the table says where
the graphs pay and where `ROW_GRAPH_MAX_READS` should sit. Prints the capture time and a table last.

    bash scripts/gpu.sh prefill   (or: python scripts/gpu_prefill.py)
"""

from __future__ import annotations

import random
import statistics
import time

import torch

from minisgl_edu.bench.offline import random_qwen3_dir
from minisgl_edu.core import SamplingParams
from minisgl_edu.engine import cuda_graph
from minisgl_edu.models.testing import IdTokenizer
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

# (requests, new tokens each, cached prefix tokens)
CASES = [
    (1, 16, 0), (1, 64, 0), (1, 128, 0), (1, 256, 0), (4, 32, 0),
    (1, 10, 592), (1, 32, 1024), (1, 128, 1024), (1, 32, 4096), (1, 128, 4096),
]  # fmt: skip
REPS = 15
rng = random.Random(0)
uids = iter(range(10**9))


def fresh(n: int) -> list[int]:
    return [rng.randrange(1000, 100000) for _ in range(n)]


def first_token_ms(s: Scheduler, reqs: int, n: int, prefix: list[int]) -> float:
    """Median wall time of: add the prompts, run until their first (and only) token is out."""
    times = []
    for _ in range(REPS):
        for _ in range(reqs):
            s.add_request(next(uids), prefix + fresh(n), SamplingParams(max_tokens=1))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        s.run_until_idle(overlap=True)  # the server's loop
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000)
        s.io.drain()
    return statistics.median(times)


def main() -> None:
    s = Scheduler(SchedulerConfig(model=random_qwen3_dir(), device="cuda"), QueueIO(), tokenizer=IdTokenizer())
    runner = s.engine.graph_runner
    print(
        f"{torch.cuda.get_device_name()}; graphs captured in {runner.capture_seconds:.1f} s "
        f"(decode and token-row graphs, sizes {runner.bs_list[0]}..{runner.max_bs})"
    )
    rows = []
    for reqs, n, p in CASES:
        prefix = fresh(p)
        if p:
            s.add_request(next(uids), prefix + fresh(8), SamplingParams(max_tokens=1))  # cache the prefix
            s.run_until_idle(overlap=False)
            s.io.drain()
        reads = reqs * sum(range(p + 1, p + n + 1))
        got = {}
        for mode, limit in (("eager", 0), ("rows", 1 << 40)):
            cuda_graph.ROW_GRAPH_MAX_READS = limit
            first_token_ms(s, reqs, n, prefix)  # warm this shape
            got[mode] = first_token_ms(s, reqs, n, prefix)
        rows.append((reqs, n, p, reads, got["eager"], got["rows"]))
    print(f"\n{'reqs':>4} {'new':>5} {'prefix':>6} {'KV reads':>9} {'eager ms':>9} {'rows ms':>8} {'x':>6}")
    for reqs, n, p, reads, e, r in rows:
        print(f"{reqs:>4} {n:>5} {p:>6} {reads:>9,} {e:>9.2f} {r:>8.2f} {e / r:>6.2f}")


if __name__ == "__main__":
    main()
