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
    # Mixed batches (SGLang's --enable-mixed-chunk): when a prefill batch is scheduled, every running
    # request's decode token rides along in the same forward pass ("mixed"), so decoding goes on
    # while a long prompt is chunked in instead of waiting for its last chunk. The decode tokens
    # count against `max_prefill_tokens`: the prompt chunks get the budget minus one token per
    # running request. When the running requests alone fill the budget, the step is scheduled as
    # without mixing (the prompt first), so a waiting prompt is never starved.
    mixed_chunk: bool = False
    # Speculative decoding (scheduler/ngram.py, engine/verify.py): None (off) or "ngram", SGLang's
    # --speculative-algorithm NGRAM. A decoding request proposes up to `speculative_num_draft_tokens`
    # tokens by finding its last n tokens (n from `speculative_ngram_max` down to
    # `speculative_ngram_min`) earlier in its own prompt and output; one forward pass checks them all.
    # None: 4 on CPU, where each more position costs a little more; 7 on CUDA, where the verify of
    # one request (k + 1 rows) replays the 8-row graph whether k is 4 or 7 (docs/benchmarks.md,
    # "Speculative decoding at one stream", "On the H200").
    speculative_algorithm: Optional[str] = None
    speculative_num_draft_tokens: Optional[int] = None
    speculative_ngram_max: int = 4
    speculative_ngram_min: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.speculative_algorithm not in (None, "ngram"):
            raise ValueError(f"unknown speculative_algorithm {self.speculative_algorithm!r} (choose 'ngram' or None)")
        if self.speculative_num_draft_tokens is not None and self.speculative_num_draft_tokens < 1:
            raise ValueError("speculative_num_draft_tokens must be at least 1")
        if not 1 <= self.speculative_ngram_min <= self.speculative_ngram_max:
            raise ValueError("need 1 <= speculative_ngram_min <= speculative_ngram_max")
