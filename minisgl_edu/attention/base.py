"""The attention backend interface.

Where this sits on the request path: inside `Engine.forward_batch`, every attention layer of the
model calls `backend.forward(layer_id, q, k, v)`. The backend stores the new K/V into the paged
pool and attends over everything the request has so far. `prepare()` runs once per batch (the
"plan"), `forward()` once per layer, so per-batch index work is not repeated 30 times.

A backend that can run inside a captured CUDA graph (`engine/cuda_graph.py`) also implements the
graph hooks: `init_graphs` once, before capture, for the batch sizes it will run, then
`prepare_for_replay` before every replay, in place of `prepare`. A graph replays fixed kernels on
fixed addresses, so those hooks fill fixed buffers instead of making new tensors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import torch

if TYPE_CHECKING:
    from minisgl_edu.attention.graph_inputs import PackedGraphInputs
    from minisgl_edu.kvcache.pool import KVPool


@dataclass
class AttentionMetadata:
    """What attention needs to know about a batch, in token positions.

    For request b: it computes `q_lens[b]` new tokens at positions
    `kv_lens[b] - q_lens[b] .. kv_lens[b] - 1`, and attends to all `kv_lens[b]` tokens, whose K/V
    live in page-table row `rows[b]`. `out_loc` holds the pool slot of every new token, in batch
    order (request 0's tokens first).

    A mixed batch (prompt chunks and decode tokens in one forward pass) is described the same way:
    its decode rows are requests with `q_lens[b] == 1`. Backends pick their kernel by the q
    lengths (`is_decode`), never by the scheduler's phase, so one longer row sends the whole batch
    to the prefill kernel, which takes ragged q lengths, length-1 rows included.
    """

    is_prefill: bool  # the batch has prompt tokens (a prefill or a mixed batch)
    q_lens: list[int]
    kv_lens: list[int]
    rows: torch.Tensor  # [B] int64, page-table rows
    out_loc: torch.Tensor  # [T] int64, pool slots of the new tokens
    row_ids: Optional[list[int]] = None  # the same rows on the host, when the caller has them

    def host_rows(self) -> list[int]:
        """The page-table rows as a host list (read back from `rows` if not given: a sync)."""
        return self.row_ids if self.row_ids is not None else self.rows.tolist()

    @property
    def batch_size(self) -> int:
        return len(self.q_lens)

    @property
    def num_tokens(self) -> int:
        return int(sum(self.q_lens))

    @property
    def is_decode(self) -> bool:
        """One new token per request (what decode kernels take). A prompt chunk of one token counts
        too: like a decode token, it attends to all `kv_lens[b]` tokens up to itself."""
        return all(q == 1 for q in self.q_lens)


class AttentionBackend(ABC):
    pool: KVPool  # the paged K/V pool the backend reads and writes
    out_loc: Optional[torch.Tensor] = None  # pool slots of the new tokens of the batch being run
    # Decode batches of at most this many requests (None: any). A hybrid backend sends larger
    # ones to its other half.
    max_decode_batch: Optional[int] = None
    supports_graphs: bool = False  # implements the CUDA-graph hooks below

    @abstractmethod
    def prepare(self, meta: AttentionMetadata) -> None:
        """Build the per-batch index tensors (once per forward pass)."""

    @abstractmethod
    def forward(
        self, layer_id: int, q: torch.Tensor, k: Optional[torch.Tensor], v: Optional[torch.Tensor]
    ) -> torch.Tensor:
        """q: [T, Hq, D]; k, v: [T, Hkv, D] for the new tokens. Returns [T, Hq, D].

        k = v = None: the caller has already written them into `pool` at `out_loc` (the CUDA
        layers fold that write into their RoPE kernel, `kernels/qk_rope_store.py`).
        """

    # ------------------------------------------------------------------ CUDA graphs
    def graph_page_rows(self, bs_list: list[int]) -> int:
        """How many requests' page lists this backend's graphs read from the step's one input
        copy (`PackedGraphInputs`); 0: it plans its own page lists."""
        return 0

    def init_graphs(self, bs_list: list[int], inputs: PackedGraphInputs) -> None:
        """Make the fixed buffers for decode graphs of these batch sizes (once, before capture)."""
        raise NotImplementedError(f"{type(self).__name__} cannot run in a CUDA graph")

    def prepare_for_replay(self, bs: int, rows: list[int], kv_lens: list[int], inputs: PackedGraphInputs) -> None:
        """Before a replay of the graph of size `bs`: a decode batch of len(rows) requests (their
        page-table rows and lengths, new token included), padded to `bs` with one-token requests
        in the pool's dummy page. The step's rows, positions and KV slots are already written to
        `inputs` (not yet sent); a backend may add its page lists there (`inputs.write_pages`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot run in a CUDA graph")

    def prepare_for_capture(self, bs: int, inputs: PackedGraphInputs) -> None:
        """Before capturing the graph of size `bs`: a batch of padding only."""
        self.prepare_for_replay(bs, [], [], inputs)
