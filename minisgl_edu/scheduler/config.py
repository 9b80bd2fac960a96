"""Settings of the scheduler (on top of the engine's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from minisgl_edu.engine.config import EngineConfig


@dataclass
class SchedulerConfig(EngineConfig):
    max_prefill_tokens: int = 2048  # token budget of one prefill batch; longer prompts are chunked
    cache: str = "radix"  # prefix cache: "radix" or "naive"
    stats_interval: float = 0.1  # seconds between two stats messages to the server
    # run_loop(): overlap_loop (prepare batch N+1 while N runs) or normal_loop. None = on with CUDA.
    overlap: Optional[bool] = None
