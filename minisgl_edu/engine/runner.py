"""Run the model on a batch's inputs, the plain way: one kernel launch after another.

Where this sits on the request path: the second of `Engine.forward_batch`'s three steps (inputs,
run the model, sample). The engine picks its runner once, when it is built: this one on CPU, and
on CUDA without graphs; with graphs, `CudaGraphRunner` (`cuda_graph.py`), which replays a
captured graph for the batches one fits and hands every other batch to this one.

A runner gives back the logits of the positions the batch samples from (`ForwardInputs.sample_at`),
nothing else: the LM head is the largest matmul of a small model, so a prompt's other positions
never go through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from minisgl_edu.attention import AttentionMetadata
from minisgl_edu.engine.forward_inputs import ForwardInputs
from minisgl_edu.host_copy import to_device


@dataclass
class RunOutput:
    logits: Optional[torch.Tensor]  # [len(sample_at), vocab]; None when no position is sampled
    # The argmax of each row, when the runner took it already (a decode graph does, and writes it
    # to `Engine.last_tokens` itself); None otherwise.
    greedy: Optional[torch.Tensor] = None


class EagerRunner:
    def __init__(self, model, attn, last_tokens: torch.Tensor) -> None:
        self.model = model
        self.attn = attn
        self.last_tokens = last_tokens  # the token each page-table row sampled last (Engine)
        self.device = last_tokens.device

    def run(self, inputs: ForwardInputs) -> RunOutput:
        rows = self.tensor(inputs.rows)
        self.attn.prepare(
            AttentionMetadata(
                is_prefill=not inputs.is_decode,
                q_lens=inputs.q_lens,
                kv_lens=inputs.kv_lens,
                rows=rows,
                out_loc=self.tensor(inputs.out_loc),
                row_ids=inputs.rows,
            )
        )
        hidden = self.model(self.token_ids(inputs, rows), self.tensor(inputs.positions), self.attn)
        return RunOutput(self.logits(hidden, inputs))

    def token_ids(self, inputs: ForwardInputs, rows: torch.Tensor) -> torch.Tensor:
        """The input tokens on the device: a decode token from `last_tokens` (where the sampler
        wrote it, maybe still running), the others from the host."""
        if inputs.all_from_device:  # a decode batch: each item's token is its row's last one
            return self.last_tokens.index_select(0, rows)
        ids = self.tensor(inputs.ids)
        if inputs.from_device:  # a mixed batch: its decode items' tokens
            device_rows = [inputs.token_rows[i] for i in inputs.from_device]
            ids[self.tensor(inputs.from_device)] = self.last_tokens.index_select(0, self.tensor(device_rows))
        return ids

    def logits(self, hidden: torch.Tensor, inputs: ForwardInputs) -> Optional[torch.Tensor]:
        """The logits of the sampled positions only (None if there are none)."""
        if not inputs.sample_at:
            return None
        if len(inputs.sample_at) < hidden.shape[0]:
            hidden = hidden[self.tensor(inputs.sample_at)]
        return self.model.compute_logits(hidden)

    def tensor(self, values: list[int]) -> torch.Tensor:
        """An int64 tensor on the model's device (on CUDA through pinned memory, without a sync)."""
        return to_device(values, torch.int64, self.device)
