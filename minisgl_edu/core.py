"""The state of one request and of one batch.

Where this sits on the request path: the tokenizer turns a prompt into a `UserMsg`; the scheduler
turns each `UserMsg` into a `Req` and groups `Req`s into a `Batch`, which the engine runs. Every
other module passes these objects around, so they are kept small and plain.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # only for the annotations: core.py imports nothing heavy
    import torch

    from minisgl_edu.kvcache.radix_cache import RadixNode


@dataclass
class SamplingParams:
    """How to pick each next token and when to stop (the fields an OpenAI request carries)."""

    max_tokens: int = 128
    temperature: float = 0.0  # 0 means greedy (argmax)
    top_k: int = -1  # -1 (or 0) means no top-k filter
    top_p: float = 1.0
    ignore_eos: bool = False
    stop: list[str] = field(default_factory=list)
    seed: Optional[int] = None

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        self.stop = [s for s in (self.stop or []) if s]
        if self.top_k == 0:
            self.top_k = -1

    @property
    def is_greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1

    def validate(self) -> None:
        """Raise ValueError with a message that can go back to the client unchanged."""
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must be non-negative")
        if not (0.0 < self.top_p <= 1.0):
            raise ValueError("top_p must be in (0, 1]")
        if self.top_k < -1:
            raise ValueError("top_k must be -1 (off) or a positive integer")


class ReqStatus(enum.Enum):
    WAITING = "waiting"  # in the prefill queue, no KV computed yet
    PREFILLING = "prefilling"  # part of its prompt is in the cache (chunked prefill)
    DECODING = "decoding"  # prompt done, one new token per step
    FINISHED = "finished"


@dataclass
class Req:
    """One request inside the scheduler.

    `cached_len` counts the tokens whose K/V already sit in the paged cache; the tokens after it
    are what the next forward pass must compute. `table_idx` is the request's row in the page
    table, held from admission until the request finishes or is aborted.
    """

    uid: int
    input_ids: list[int]
    sampling_params: SamplingParams
    output_ids: list[int] = field(default_factory=list)
    status: ReqStatus = ReqStatus.WAITING
    table_idx: int = -1
    cached_len: int = 0  # tokens with K/V in the cache (prefix hits included)
    prefix_len: int = 0  # of which reused from the prefix cache
    max_new_tokens: int = 0  # max_tokens after clamping to the context
    finish_reason: Optional[str] = None  # "stop" | "length" | "abort"
    stop_str: Optional[str] = None  # the stop string that ended it, if any
    cache_handle: Optional[RadixNode] = None  # the prefix-cache node this request has locked (radix cache)
    generator: Optional[torch.Generator] = None  # for seeded sampling
    arrived_at: float = 0.0  # time.monotonic() when the scheduler queued it
    queue_seconds: Optional[float] = None  # arrival -> first scheduled in a batch (None until then)

    @property
    def all_ids(self) -> list[int]:
        return self.input_ids + self.output_ids

    @property
    def total_len(self) -> int:
        return len(self.input_ids) + len(self.output_ids)

    @property
    def remaining_prompt(self) -> int:
        """Prompt tokens not yet in the cache (0 once the prefill is done)."""
        return max(len(self.input_ids) - self.cached_len, 0)

    @property
    def is_finished(self) -> bool:
        return self.status == ReqStatus.FINISHED


@dataclass
class ScheduledReq:
    """One request's share of a batch: which tokens it contributes this step."""

    req: Req
    start: int  # position of the first token computed this step
    num_tokens: int  # tokens computed this step (1 for decode, a chunk for prefill)

    @property
    def end(self) -> int:
        return self.start + self.num_tokens

    @property
    def completes_prompt(self) -> bool:
        """True when this step reaches the end of the known tokens, so a new token is sampled."""
        return self.end >= self.req.total_len

    @property
    def is_decode(self) -> bool:
        """A decode token (the K/V of the newest generated token), not a prompt chunk.

        Told by position: a prompt chunk always starts inside the prompt (at least one prompt
        token is left to compute, even after a prefix-cache hit), a decode token after it.
        """
        return self.start >= len(self.req.input_ids)


@dataclass
class Batch:
    """What one forward pass computes: prompt chunks ("prefill"), one decode token per running
    request ("decode"), or, with `SchedulerConfig.mixed_chunk`, both at once ("mixed").

    In a mixed batch the prompt chunks come first, then the decode tokens; `ScheduledReq.is_decode`
    tells them apart.
    """

    phase: str  # "prefill" | "decode" | "mixed"
    items: list[ScheduledReq]
    batch_id: int = 0

    @property
    def reqs(self) -> list[Req]:
        return [it.req for it in self.items]

    @property
    def is_prefill(self) -> bool:
        """Only prompt chunks (a mixed batch is not a prefill batch: ask each item)."""
        return self.phase == "prefill"

    @property
    def is_decode(self) -> bool:
        """Only decode tokens, one per request: what a CUDA graph of decode can replay."""
        return self.phase == "decode"

    @property
    def num_tokens(self) -> int:
        return sum(it.num_tokens for it in self.items)

    @property
    def size(self) -> int:
        return len(self.items)
