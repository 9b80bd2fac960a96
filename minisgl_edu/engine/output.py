"""What a forward pass gives back: each batch item's new tokens, now (CPU) or once the GPU is done.

Where this sits on the request path: the end of `Engine.forward_batch`. The scheduler reads a
`ForwardOutput` in `_process_results`. Under overlap scheduling the engine returns a
`PendingForward` at once, while the GPU still runs the batch, and the scheduler calls its
`result()` only after it has prepared the next batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from minisgl_edu.engine.logprobs import BatchLogprobs, TokenLogprobs


@dataclass
class ForwardOutput:
    """The new tokens of each batch item, in order: none for a prompt chunk that leaves part of its
    prompt to compute, one otherwise; for an item that verified k drafts, the model's token at each
    of its positions (k+1 with greedy decoding), of which the scheduler's verify step keeps 1 to
    k+1. With each token its logprobs where the request asked for them (else None)."""

    tokens: list[list[int]]
    logprobs: list[list[Optional[TokenLogprobs]]]


@dataclass
class PendingForward:
    """A batch that is running (CUDA) or done (CPU): `result()` gives its next tokens."""

    sampled: list[bool]  # per batch item: does it get a token from this batch?
    tokens: Optional[torch.Tensor]  # on the host (pinned on CUDA), filled when `event` completes
    logprobs: Optional[BatchLogprobs] = None  # of the sampled rows that asked (read after the event)
    event: Optional[torch.cuda.Event] = None  # recorded after the device-to-host copy (CUDA only)
    ready: Optional[ForwardOutput] = None  # a result known at launch (a verify batch; a stand-in engine)

    def result(self) -> ForwardOutput:
        if self.ready is not None:
            return self.ready
        if self.event is not None:
            self.event.synchronize()
        values = iter(self.tokens.tolist()) if self.tokens is not None else iter(())
        rows = self.logprobs.per_row(len(self.tokens)) if self.logprobs is not None else None
        lps = iter(rows) if rows is not None else iter(())
        return ForwardOutput(
            [[next(values)] if s else [] for s in self.sampled],
            [[next(lps, None)] if s else [] for s in self.sampled],
        )
