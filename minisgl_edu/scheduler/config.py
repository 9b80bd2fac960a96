"""Settings of the scheduler (on top of the engine's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from minisgl_edu.engine.config import EngineConfig


@dataclass
class SchedulerConfig(EngineConfig):
    # Token budget of one prefill batch; longer prompts are chunked. None: 2048 on CPU (a step
    # stays short enough to watch), 8192 on CUDA, where a 2048-token batch leaves the GPU
    # underused (the 256-request benchmark, CUDA-core decode: 18.4-19.2k -> 20.9-21.1k tok/s;
    # docs/benchmarks.md).
    max_prefill_tokens: Optional[int] = None
    cache: str = "radix"  # prefix cache: "radix" or "naive"
    # Seconds at least between two stats messages to the server (/metrics, /dashboard); none is
    # sent while nothing changes.
    stats_interval: float = 0.25
    # run_loop(): overlap_loop (prepare batch N+1 while N runs) or normal_loop. None = on with CUDA.
    overlap: Optional[bool] = None
