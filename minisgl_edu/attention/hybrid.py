"""A hybrid attention backend: one backend for prefill, another for decode.

Where this sits on the request path: in place of a single backend, inside `Engine.forward_batch`.
Prefill and decode want different kernels: a prefill attends many new tokens at once (tensor-core
work, FlashInfer's prefill kernel), a decode step one token per request, where what counts at a
small batch is how few kernels run and how little the host plans. `attention_backend =
"flashinfer,triton"` (the CUDA default) pairs FlashInfer's prefill with our Triton decode kernel.

The rule: a batch of one new token per request goes to the decode backend if it takes that many
requests (`max_decode_batch`); everything else goes to the prefill backend, which must handle
any batch (FlashInfer and torch do), a mixed batch too (a prompt chunk beside decode rows of one
token: `SchedulerConfig.mixed_chunk`). The same rule picks the backend of each CUDA-graph size.
Whichever backend the last `prepare` (or `prepare_for_replay`) chose runs `forward`.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata


class HybridBackend(AttentionBackend):
    def __init__(self, prefill_backend: AttentionBackend, decode_backend: AttentionBackend) -> None:
        self.prefill_backend = prefill_backend
        self.decode_backend = decode_backend
        self.pool = prefill_backend.pool
        # Graphs are decode batches: a decode backend that takes every size runs all of them alone.
        takes_all = decode_backend.max_decode_batch is None
        self.supports_graphs = decode_backend.supports_graphs and (takes_all or prefill_backend.supports_graphs)
        self._active: AttentionBackend = prefill_backend

    def _takes_decode(self, batch_size: int) -> bool:
        limit = self.decode_backend.max_decode_batch
        return limit is None or batch_size <= limit

    @property
    def out_loc(self) -> Optional[torch.Tensor]:
        return self._active.out_loc

    def prepare(self, meta: AttentionMetadata) -> None:
        decode = meta.is_decode and self._takes_decode(meta.batch_size)
        self._active = self.decode_backend if decode else self.prefill_backend
        self._active.prepare(meta)

    def forward(
        self, layer_id: int, q: torch.Tensor, k: Optional[torch.Tensor], v: Optional[torch.Tensor]
    ) -> torch.Tensor:
        return self._active.forward(layer_id, q, k, v)

    # ------------------------------------------------------------------ CUDA graphs
    def _split(self, bs_list: list[int]) -> tuple[list[int], list[int]]:
        """(sizes the decode backend runs, sizes the prefill backend runs)."""
        return [b for b in bs_list if self._takes_decode(b)], [b for b in bs_list if not self._takes_decode(b)]

    def graph_page_rows(self, bs_list: list[int]) -> int:
        mine, other = self._split(bs_list)
        return max(
            self.decode_backend.graph_page_rows(mine) if mine else 0,
            self.prefill_backend.graph_page_rows(other) if other else 0,
        )

    def init_graphs(self, bs_list: list[int], inputs) -> None:
        mine, other = self._split(bs_list)
        if mine:
            self.decode_backend.init_graphs(mine, inputs)
        if other:
            self.prefill_backend.init_graphs(other, inputs)

    def prepare_for_replay(self, bs: int, rows: list[int], kv_lens: list[int], inputs) -> None:
        self._active = self.decode_backend if self._takes_decode(bs) else self.prefill_backend
        self._active.prepare_for_replay(bs, rows, kv_lens, inputs)
